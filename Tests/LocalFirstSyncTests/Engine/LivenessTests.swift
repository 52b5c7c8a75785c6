import Foundation
import Testing
@testable import LocalFirstSync
@testable import LFSyncCrypto
@testable import LFSyncWire
@testable import LocalFirstSyncTesting

/// A peer that goes quiet is pinged; one that does not even answer the Ping is
/// dropped (PROTOCOL.md, "Limits and deadlines") — driven by the network's
/// manual clock, not by sleeping.
@Suite(.timeLimit(.minutes(1))) struct LivenessTests {
    @Test func aPeerThatIgnoresThePingIsDroppedAfterTwoIdleIntervals() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let clock = ManualClock()
            let network = InMemoryNetwork(clock: clock)
            let mallory = DeviceIdentity.generate()
            let nas = try TestDevice(name: "nas", root: root, transport: network.transport(host: "nas"), trusting: [mallory])
            try await nas.start(host: "nas")
            // The silent peer itself never times out: only the receiver's clock matters here.
            let (channel, decision) = try await EngineHarness.rawSetUp(with: nas, network: network, as: mallory,
                                                                       configuration: .init(idleTimeout: nil))
            #expect(decision.accepted)

            // The idle timer of the nas's read, armed at 0 (not any other timer: one counted by
            // mistake let time move before it was armed, and the test waited for ever).
            await clock.waitForSleeper(until: clock.now.advanced(by: WireProtocol.idleInterval))
            clock.advance(by: WireProtocol.idleInterval)
            guard case .ping? = try await channel.receive() else {
                Issue.record("a quiet connection was not pinged")
                return
            }
            #expect(await nas.sync.connectedPeers.count == 1, "one quiet interval is not a reason to hang up")

            await clock.waitForSleeper(until: clock.now.advanced(by: WireProtocol.idleInterval))
            clock.advance(by: WireProtocol.idleInterval)
            var closed = false
            do { closed = try await channel.receive() == nil } catch { closed = true }
            #expect(closed, "the peer that ignored the Ping was not dropped")
            for _ in 0..<200 where await !nas.sync.connectedPeers.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
            #expect(await nas.sync.connectedPeers.isEmpty)
        }
    }
}
