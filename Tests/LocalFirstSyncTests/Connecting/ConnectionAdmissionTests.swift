import Testing
@testable import LocalFirstSync

/// The caps `serve` puts on connections, driven without sockets.
@Suite struct ConnectionAdmissionTests {
    static let limits = ConnectionLimits(total: 6, perAddress: 4, unauthenticated: 4, unauthenticatedPerAddress: 2)

    static func ticket(_ verdict: ConnectionAdmission.Verdict) -> ConnectionAdmission.Ticket? {
        if case let .admitted(ticket) = verdict { ticket } else { nil }
    }

    @Test func aFloodFromOneAddressIsCappedAndOthersStillGetIn() {
        var admission = ConnectionAdmission(limits: Self.limits)
        let first = Self.ticket(admission.admit(from: "10.0.0.66"))
        let second = Self.ticket(admission.admit(from: "10.0.0.66"))
        #expect(first != nil && second != nil)
        // The third stranger from the same address is refused at once, with the cap named.
        let third = admission.admit(from: "10.0.0.66")
        guard case let .refused(reason) = third else {
            Issue.record("a third unauthenticated connection from one address was admitted")
            return
        }
        #expect(reason.contains("10.0.0.66"))
        // A device at another address is not locked out by that flood.
        let other = Self.ticket(admission.admit(from: "10.0.0.2"))
        #expect(other != nil)
        #expect(admission.unauthenticatedCount == 3)
    }

    @Test func anAcceptedConnectionLeavesTheStrangerCaps() throws {
        var admission = ConnectionAdmission(limits: Self.limits)
        let firstVerdict = admission.admit(from: "10.0.0.2")
        let trusted = try #require(Self.ticket(firstVerdict))
        let stranger = Self.ticket(admission.admit(from: "10.0.0.2"))
        #expect(stranger != nil)
        admission.authenticated(trusted)
        #expect(admission.unauthenticatedCount == 1)
        // A slot for a stranger from that address is free again; the per-address total still counts both.
        let again = Self.ticket(admission.admit(from: "10.0.0.2"))
        let over = Self.ticket(admission.admit(from: "10.0.0.2"))
        #expect(again != nil)
        #expect(over == nil)
        #expect(admission.heldCount == 3)
    }

    @Test func theOverallCapsHoldAcrossAddresses() {
        var admission = ConnectionAdmission(limits: Self.limits)
        var admitted: [ConnectionAdmission.Ticket] = []
        for host in ["a", "b", "c", "d", "e"] {
            if let ticket = Self.ticket(admission.admit(from: host)) { admitted.append(ticket) }
        }
        #expect(admitted.count == 4, "unauthenticated cap of 4 overall")
        for ticket in admitted { admission.authenticated(ticket) }
        let f = Self.ticket(admission.admit(from: "f"))
        let g = Self.ticket(admission.admit(from: "g"))
        #expect(f != nil && g != nil)
        let h = admission.admit(from: "h")
        guard case let .refused(reason) = h else {
            Issue.record("a seventh connection was admitted over a total of 6")
            return
        }
        #expect(reason.contains("6 connections"))
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
        // Both stranger slots of the address are free: a double release did not go negative.
        let results = (0..<3).map { _ in Self.ticket(admission.admit(from: "x")) != nil }
        #expect(results == [true, true, false])
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
