import Foundation
import Testing
@testable import LFSyncFixtures
@testable import LocalFirstSync
@testable import LFSyncStore
@testable import LocalFirstSyncTesting

/// `LocalSync.stop()` is the end of everything the engine started (`EngineTasks`): when it
/// returns, every push has ended, each peer's summary is out and the ledger holds what
/// those ends recorded.
@Suite(.timeLimit(.minutes(2))) struct EngineStopTests {
    @Test func stopReturnsOnlyOnceEveryPushHasEndedAndTheLedgerIsWritten() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let (laptop, nas, assets) = try await CancelTransferTests.slowPair(root)
            let transfer = await laptop.sync.send(assets, from: laptop.library)
            for await update in transfer where update.state == .transferring { break }
            await laptop.sync.stop()
            // Not waited for: stop() already did.
            let summaries = try #require(transfer.summariesIfCompleted, "stop() returned while the push was still running")
            #expect(summaries.count == 1)
            #expect(summaries.allSatisfy { $0.assetsStored + $0.assetsFailed == Set(assets.map(\.contentID)).count })
            let states = try CancelTransferTests.ledgerStates(laptop, nas, assets)
            #expect(!states.contains(.inFlight), "rows still in flight after stop(): \(states)")
            #expect(states.contains { $0 != .synced }, "the push finished before stop(): the test proves nothing")
        }
    }
}
