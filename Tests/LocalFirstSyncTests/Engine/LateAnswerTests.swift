import Foundation
import Testing
@testable import LFSyncFixtures
@testable import LocalFirstSync
@testable import LocalFirstSyncTesting

/// An answer that comes after the sender stopped waiting is handled politely
/// (PROTOCOL.md, Session flow 4): no "reply to unknown offer" violation, the
/// connection stays, and the late "yes" is answered with a Cancel, so the
/// receiver does not wait for chunks that will never come.
@Suite(.timeLimit(.minutes(1))) struct LateAnswerTests {
    @Test func aLateYesGetsACancelNotADroppedConnection() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let network = InMemoryNetwork()
            // The sender waits a fraction of a second only: the person on the NAS answers later.
            let laptop = try TestDevice(name: "laptop", root: root, transport: network.transport(host: "laptop"),
                                        offerReplyTimeout: .milliseconds(300))
            let nas = try TestDevice(name: "nas", root: root, transport: network.transport(host: "nas"),
                                     trusting: [laptop.identity], autoAcceptOffers: false)
            try await nas.start(host: "nas")
            try await laptop.sync.connect(to: nas.address, expecting: nas.identity.deviceID)
            try EngineHarness.writeSample(at: laptop.library, padding: 5_000)
            let assets = try await laptop.scan()
            var offers = nas.sync.incomingTransfers().makeAsyncIterator()

            let summaries = await laptop.sync.send(assets, from: laptop.library).waitUntilCompleted()
            guard case .declined? = summaries.first?.state else {
                Issue.record("an unanswered offer should end as declined, got \(String(describing: summaries.first?.state))")
                return
            }
            // Typed per asset: the sender stopped waiting, so each asset timed out.
            #expect(summaries.first?.failures.values.allSatisfy { if case .timedOut = $0 { true } else { false } } == true)
            // Now the person says yes.
            let offer = try #require(await offers.next())
            let session = try await offer.accept()
            let outcomes = try await session.files()
            #expect(outcomes.count == assets.count)
            // Failed because the sender's Cancel came (its reason is the one SessionSender sends a
            // late yes), not because the connection ended or a deadline ran out.
            #expect(outcomes.values.allSatisfy {
                if case let .failed(reason) = $0 { reason == "sender cancelled: the answer came after the sender stopped waiting for it" } else { false }
            }, "every accepted asset gets its one Receipt, failed by the sender's Cancel: \(outcomes.values)")
            #expect(await laptop.sync.connectedPeers.count == 1, "a late answer is not a reason to hang up")
            #expect(await nas.sync.connectedPeers.count == 1)
            #expect(try EngineHarness.tree(nas.library).isEmpty)
        }
    }
}
