import Foundation
import Testing
@testable import LFSyncFixtures
@testable import LocalFirstSync
@testable import LFSyncContent
@testable import LFSyncStore
@testable import LocalFirstSyncTesting

/// Cancelling an outgoing transfer stops it, tells the peer, and leaves what was not
/// confirmed `pending` — not `failed` (issue 15: the library API).
@Suite(.timeLimit(.minutes(2))) struct CancelTransferTests {
    /// A sender and one receiver whose link delays every delivery, so a transfer is
    /// still running when the test cancels it.
    static func slowPair(_ root: URL) async throws -> (TestDevice, TestDevice, [Asset]) {
        let network = InMemoryNetwork()
        let laptop = try TestDevice(name: "laptop", root: root, transport: network.transport(host: "laptop"))
        let nas = try TestDevice(name: "nas", root: root, transport: network.transport(host: "nas"), trusting: [laptop.identity])
        try await nas.start(host: "nas")
        network.setFaults(.delay(.milliseconds(20)), for: nas.address)
        try await laptop.sync.connect(to: nas.address, expecting: nas.identity.deviceID)
        try EngineHarness.writeSample(at: laptop.library, padding: 400_000)
        return (laptop, nas, try await laptop.scan())
    }

    static func ledgerStates(_ laptop: TestDevice, _ nas: TestDevice, _ assets: [Asset]) throws -> [SyncState?] {
        try assets.map { try laptop.state(of: $0, for: nas) }
    }

    @Test func cancelStopsTheTransferAndLeavesTheRestPending() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let (laptop, nas, assets) = try await Self.slowPair(root)
            var offers = nas.sync.incomingTransfers().makeAsyncIterator()
            let transfer = await laptop.sync.send(assets, from: laptop.library)
            for await update in transfer where update.state == .transferring {
                try await transfer.cancel()
                break
            }
            let summaries = await transfer.waitUntilCompleted()
            #expect(summaries.map(\.state) == [.cancelled])
            // Every asset is counted once: stored, or failed because the sender cancelled.
            let summary = try #require(summaries.first)
            #expect(summary.assetsStored + summary.assetsFailed == Set(assets.map(\.contentID)).count)
            #expect(summary.failures.values.allSatisfy { $0 == .cancelled } && summary.assetsFailed > 0)
            let states = try Self.ledgerStates(laptop, nas, assets)
            #expect(states.allSatisfy { $0 == .pending || $0 == .synced }, "nothing failed, nothing left in flight: \(states)")
            #expect(states.contains(.pending), "the transfer was stopped before everything was confirmed")
            // The receiver was told: every asset it accepted got its Receipt, and the connection stays.
            let incoming = try #require(await offers.next())
            let outcomes = try await incoming.accept().files()  // accepted automatically: this only hands over the session
            #expect(outcomes.count == assets.count)
            // Told, not cut off: what did not arrive failed by the sender's Cancel, with its reason.
            func byCancel(_ outcome: ReceiveSessionHandle.Outcome) -> Bool {
                if case let .failed(reason) = outcome { reason == "sender cancelled: the sender cancelled the transfer" } else { false }
            }
            #expect(outcomes.values.contains(where: byCancel), "no asset was failed by a Cancel: \(outcomes.values)")
            #expect(outcomes.values.allSatisfy { $0.isInLibrary || byCancel($0) }, "\(outcomes.values)")
            #expect(await laptop.sync.connectedPeers.count == 1)
            // What was left pending goes through on the next send.
            let again = await laptop.sync.send(assets, from: laptop.library).waitUntilCompleted()
            #expect(again.map(\.state) == [.completed])
            #expect(try Self.ledgerStates(laptop, nas, assets).allSatisfy { $0 == .synced })
        }
    }

    @Test func cancellingTheWaitingTaskCancelsTheTransfer() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let (laptop, nas, assets) = try await Self.slowPair(root)
            let transfer = await laptop.sync.send(assets, from: laptop.library)
            let waiting = Task { await transfer.waitUntilCompleted() }
            for await update in transfer where update.state == .transferring { break }
            waiting.cancel()
            let summaries = await waiting.value
            #expect(transfer.isCancelled)
            #expect(summaries.map(\.state) == [.cancelled])
            #expect(try Self.ledgerStates(laptop, nas, assets).allSatisfy { $0 == .pending || $0 == .synced })
        }
    }

    @Test func cancellingTheIteratingTaskCancelsTheTransferButLeavingTheLoopDoesNot() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let (laptop, nas, assets) = try await Self.slowPair(root)
            let transfer = await laptop.sync.send(assets, from: laptop.library)
            // Leaving a loop early is not a cancel.
            for await update in transfer where update.state == .transferring { break }
            #expect(!transfer.isCancelled)
            // Cancelling the task that iterates is.
            let iterating = Task { for await _ in transfer {} }
            iterating.cancel()
            await iterating.value
            let summaries = await transfer.waitUntilCompleted()
            #expect(transfer.isCancelled)
            #expect(summaries.map(\.state) == [.cancelled])
            #expect(try Self.ledgerStates(laptop, nas, assets).allSatisfy { $0 == .pending || $0 == .synced })
        }
    }
}
