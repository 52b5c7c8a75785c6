import Foundation
import Testing
@testable import LFSyncTCP
@testable import LFSyncTransport

/// Lost wake-ups: a receive, send or accept that parks just as the reactor reports the
/// descriptor ready must still be woken. A lost report does not hang for ever (the idle
/// deadline reads what is there), so these measure the worst round trip instead: with a
/// 20 s idle deadline, one lost report shows as a round trip of 20 s. The bound asserted
/// is half that: on two cores shared with the rest of the suite (the lab's processes
/// among them) a round trip has been seen to take 2 s without anything being lost.
@Suite struct TCPWakeupTests {
    typealias Support = TransportTestSupport
    static let idleDeadline: Duration = .seconds(20)

    /// Thousands of small request/response round trips, two pairs at once (so the
    /// reactor, the two cooperative threads and both directions contend).
    @Test func roundTripsNeverWaitForADeadline() async throws {
        let transport = TCPTransport(configuration: .init(idleTimeout: Self.idleDeadline))
        let listener = try await transport.listen(on: PeerAddress(host: "127.0.0.1", port: 0))
        let rounds = 4000
        let worst = try await withThrowingTaskGroup(of: Duration.self) { group in
            for _ in 0..<2 {
                async let accepted = listener.accept()
                let client = try await transport.connect(to: listener.localAddress, timeout: .seconds(5))
                let server = try await accepted
                group.addTask {
                    for _ in 0..<rounds {
                        guard let request = try await server.receive() else { break }
                        try await server.send(request)
                    }
                    return .zero
                }
                group.addTask {
                    var worst = Duration.zero
                    for round in 0..<rounds {
                        let started = ContinuousClock.now
                        try await client.send(Support.pattern(1 + round % 300, seed: UInt64(round)))
                        var received = 0
                        while received < 1 + round % 300 {
                            guard let bytes = try await client.receive() else { throw TransportError.closed }
                            received += bytes.count
                        }
                        worst = max(worst, ContinuousClock.now - started)
                    }
                    await client.close()
                    return worst
                }
            }
            var worst = Duration.zero
            for try await each in group { worst = max(worst, each) }
            return worst
        }
        await listener.close()
        #expect(worst < Self.idleDeadline / 2, "a round trip waited \(worst): a readiness report was lost")
    }

    /// One connection after another, each accepted while the next connect is on its way.
    @Test func acceptsNeverWaitForTheNextConnection() async throws {
        let transport = TCPTransport(configuration: .init(idleTimeout: Self.idleDeadline))
        let listener = try await transport.listen(on: PeerAddress(host: "127.0.0.1", port: 0))
        var worst = Duration.zero
        for _ in 0..<400 {
            let started = ContinuousClock.now
            async let accepted = listener.accept()
            let client = try await transport.connect(to: listener.localAddress, timeout: .seconds(5))
            let server = try await accepted
            try await client.send([7])
            #expect(try await server.receive() == [7])
            worst = max(worst, ContinuousClock.now - started)
            await client.close()
            await server.close()
        }
        await listener.close()
        #expect(worst < Self.idleDeadline / 2, "an accept or first receive waited \(worst)")
    }
}
