import Foundation
import Testing
@testable import LocalFirstSync

/// The caps `serve` puts on connections, driven without sockets.
@Suite struct ConnectionAdmissionTests {
    static let limits = ConnectionLimits(total: 8, perAddress: 4, unauthenticated: 4, unauthenticatedPerAddress: 2,
                                         awaitingConsent: 2, awaitingConsentPerAddress: 1)

    static func ticket(_ verdict: ConnectionAdmission.Verdict) -> ConnectionAdmission.Ticket? {
        if case let .admitted(ticket, _) = verdict { ticket } else { nil }
    }

    static func evicted(_ verdict: ConnectionAdmission.Verdict) -> [ConnectionAdmission.Ticket] {
        if case let .admitted(_, evicting) = verdict { evicting } else { [] }
    }

    /// A third handshake from one address takes the place of the oldest from there: the
    /// address never holds more than its cap, and others are not touched.
    @Test func aFloodFromOneAddressIsCappedAndOthersStillGetIn() throws {
        var admission = ConnectionAdmission(limits: Self.limits)
        let first = try #require(Self.ticket(admission.admit(from: "10.0.0.66")))
        let second = try #require(Self.ticket(admission.admit(from: "10.0.0.66")))
        let other = try #require(Self.ticket(admission.admit(from: "10.0.0.2")))
        let third = admission.admit(from: "10.0.0.66")
        #expect(Self.ticket(third) != nil)
        #expect(Self.evicted(third) == [first], "the oldest handshake from that address made room")
        #expect(admission.handshakingCount == 3)
        // The address's own later handshakes, and the other address's, are all still held.
        let answer1 = admission.helloArrived(first, trusted: true)
        #expect(!answer1, "a dropped handshake is gone")
        let answer2 = admission.helloArrived(second, trusted: true)
        #expect(answer2)
        let answer3 = admission.helloArrived(other, trusted: true)
        #expect(answer3)
    }

    /// The review's attack: strangers at four IPv4 addresses hold every handshake slot open.
    /// A trusted device at a fifth still gets in, and once its Hello proves it, it is out of
    /// reach of the strangers' caps.
    @Test func strangersHoldingEveryHandshakeCannotKeepATrustedDeviceOut() throws {
        var admission = ConnectionAdmission(limits: ConnectionLimits())
        var strangers: [ConnectionAdmission.Ticket] = []
        for host in ["10.0.0.61", "10.0.0.62", "10.0.0.63", "10.0.0.64"] {
            for _ in 0..<8 { strangers.append(try #require(Self.ticket(admission.admit(from: host)))) }
        }
        #expect(admission.handshakingCount == 32)
        let verdict = admission.admit(from: "10.0.0.2")
        let trusted = try #require(Self.ticket(verdict))
        #expect(Self.evicted(verdict).count == 1 && strangers.contains(Self.evicted(verdict)[0]))
        let answer4 = admission.helloArrived(trusted, trusted: true)
        #expect(answer4)
        // More strangers now evict only strangers' handshakes; the trusted connection stays.
        for index in 0..<200 { _ = admission.admit(from: "10.0.1.\(index % 50)") }
        #expect(admission.handshakingCount == 32)
        #expect(admission.heldCount == 33)
        admission.release(trusted)
        #expect(admission.heldCount == 32)
    }

    /// One IPv6 host cycling through its /64 counts as one network.
    @Test func anIPv6HostCyclingAddressesCountsAsOneNetwork() throws {
        var admission = ConnectionAdmission(limits: Self.limits)
        var evictedCount = 0
        for index in 1...20 {
            let verdict = admission.admit(from: "2001:db8:1:2::\(String(index, radix: 16))")
            #expect(Self.ticket(verdict) != nil)
            evictedCount += Self.evicted(verdict).count
        }
        #expect(admission.handshakingCount == 2, "that /64's cap")
        #expect(evictedCount == 18)
        // Another /64 is another network.
        let verdict = admission.admit(from: "2001:db8:1:3::1")
        #expect(Self.ticket(verdict) != nil && Self.evicted(verdict).isEmpty)
    }

    /// Untrusted devices wait for a person in a short queue, bounded per network: past
    /// it, the connection is declined at once rather than held for the consent timeout.
    @Test func theConsentQueueIsBoundedPerNetwork() throws {
        var admission = ConnectionAdmission(limits: Self.limits)
        let one = try #require(Self.ticket(admission.admit(from: "10.0.0.66")))
        let two = try #require(Self.ticket(admission.admit(from: "10.0.0.66")))
        let answer5 = admission.helloArrived(one, trusted: false)
        #expect(answer5)
        let answer6 = admission.helloArrived(two, trusted: false)
        #expect(!answer6, "one waiting per network")
        #expect(admission.awaitingConsentCount == 1)
        let elsewhere = try #require(Self.ticket(admission.admit(from: "10.0.0.67")))
        let further = try #require(Self.ticket(admission.admit(from: "10.0.0.68")))
        let answer7 = admission.helloArrived(elsewhere, trusted: false)
        #expect(answer7)
        let answer8 = admission.helloArrived(further, trusted: false)
        #expect(!answer8, "two waiting in all")
        // An answer yes moves it out of the queue.
        admission.authenticated(one)
        #expect(admission.awaitingConsentCount == 1)
    }

    /// Strangers' caps together stay under the total: the rest is room for trusted devices.
    @Test func strangersCannotFillTheTotal() throws {
        var admission = ConnectionAdmission(limits: ConnectionLimits())
        var waiting = 0
        for index in 0..<400 {
            guard let ticket = Self.ticket(admission.admit(from: "10.0.\(index / 200).\(index % 200)")) else { continue }
            guard index % 3 == 0 else { continue }
            // Declined at once when the queue is full, as LocalSync does: released.
            if admission.helloArrived(ticket, trusted: false) { waiting += 1 } else { admission.release(ticket) }
        }
        for index in 0..<32 { _ = admission.admit(from: "10.9.0.\(index)") }
        #expect(waiting == 8)
        #expect(admission.awaitingConsentCount == 8 && admission.handshakingCount == 32)
        #expect(admission.unauthenticatedCount == 40)
        // 24 trusted devices come: each gets in (a stranger's handshake makes room when the
        // handshake cap is full), and no stranger's connection ever takes a trusted one's place.
        var evicted: [ConnectionAdmission.Ticket] = []
        for index in 0..<24 {
            let verdict = admission.admit(from: "192.168.1.\(index)")
            let ticket = try #require(Self.ticket(verdict))
            evicted += Self.evicted(verdict)
            let answer = admission.helloArrived(ticket, trusted: true)
            #expect(answer)
        }
        for index in 0..<100 { evicted += Self.evicted(admission.admit(from: "10.8.0.\(index)")) }
        #expect(!evicted.isEmpty && evicted.allSatisfy { !$0.address.hasPrefix("192.168.") })
        #expect(admission.heldCount <= 64)
        #expect(admission.heldCount - admission.unauthenticatedCount == 24, "every trusted connection is still held")
    }

    /// `serve` runs with the defaults (it passes no limits of its own), and they are the
    /// figures the README gives its users.
    @Test func theDefaultCapsAreTheDocumentedOnes() throws {
        let defaults = ConnectionLimits()
        let caps: [Int] = [defaults.total, defaults.perAddress, defaults.unauthenticated, defaults.unauthenticatedPerAddress,
                           defaults.awaitingConsent, defaults.awaitingConsentPerAddress]
        #expect(caps == [64, 16, 32, 8, 8, 2])
        let readme = try String(contentsOf: TestSupport.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
            .replacingOccurrences(of: "\n  ", with: " ")
        for phrase in ["holds at most 64 connections and 16 per address", "32 handshakes under way (8 per network",
                       "at most 8 untrusted devices (2 per network)"] {
            #expect(readme.contains(phrase), "README no longer says \"\(phrase)\"")
        }
        let serve = try String(contentsOf: TestSupport.packageRoot.appendingPathComponent("Sources/lfsync/Commands/ServeCommand.swift"), encoding: .utf8)
        #expect(!serve.contains("connectionLimits"), "serve sets its own caps: update the README and this test")
    }

    @Test func anExactAddressIsCappedOverAllItsConnections() throws {
        var admission = ConnectionAdmission(limits: Self.limits)
        for _ in 0..<4 {
            let ticket = try #require(Self.ticket(admission.admit(from: "10.0.0.2")))
            let answer10 = admission.helloArrived(ticket, trusted: true)
            #expect(answer10)
        }
        guard case let .refused(reason) = admission.admit(from: "10.0.0.2") else {
            Issue.record("a fifth connection from one address was admitted over a cap of 4")
            return
        }
        #expect(reason.contains("10.0.0.2"))
    }

    @Test func releasingGivesTheSlotBackExactlyOnce() throws {
        var admission = ConnectionAdmission(limits: Self.limits)
        let admitted = admission.admit(from: "x")
        let ticket = try #require(Self.ticket(admitted))
        admission.release(ticket)
        admission.release(ticket)
        admission.authenticated(ticket)
        #expect(admission.heldCount == 0)
        #expect(admission.unauthenticatedCount == 0)
        // Both handshake slots of the address are free: a double release did not go negative.
        let verdicts = (0..<3).map { _ in admission.admit(from: "x") }
        #expect(verdicts.map { Self.evicted($0).count } == [0, 0, 1])
    }

    @Test(arguments: [
        ("10.0.0.5", "10.0.0.5"), ("2001:db8:1:2:aaaa:bbbb:cccc:dddd", "2001:db8:1:2::/64"),
        ("2001:DB8:1:2::1", "2001:db8:1:2::/64"), ("fe80::1%eth0", "fe80:0:0:0::/64"),
        ("::ffff:192.168.1.9", "192.168.1.9"), ("not an address", "not an address"),
    ])
    func sourceNetworks(host: String, network: String) {
        #expect(SourceNetwork.of(host) == network)
    }
}

@Suite struct AcceptBackoffTests {
    @Test func backsOffExponentiallyToOneSecondAndResetsOnSuccess() {
        var backoff = AcceptBackoff()
        let delays = (0..<10).map { _ in backoff.failed() }
        #expect(delays.prefix(3) == [.milliseconds(5), .milliseconds(10), .milliseconds(20)])
        #expect(delays.last == .seconds(1))
        #expect(delays.allSatisfy { $0 <= .seconds(1) })
        backoff.succeeded()
        #expect(backoff.failed() == .milliseconds(5))
    }
}

@Suite struct RateLimitedLogTests {
    @Test func oneLinePerIntervalCountingTheRest() throws {
        var log = RateLimitedLog(interval: .seconds(10))
        let start = ContinuousClock.now
        let lines = [0, 1, 9, 11, 22].map { log.note("refused", at: start + .seconds($0)) }
        #expect(lines[0] == "refused")
        #expect(lines[1] == nil && lines[2] == nil, "within the interval: counted, not logged")
        let next = try #require(lines[3])
        #expect(next.contains("2 more"))
        #expect(lines[4] == "refused")
    }
}
