import Foundation
import Synchronization
import Testing
@testable import LFSyncStore

/// Ledger changes queued while the database thread is busy commit together,
/// in order, and never jump over work sent to the thread between them.
@Suite("Ledger change queue")
struct LedgerChangeQueueTests {
    let nas: PeerKey = "nas"

    @Test func changesQueuedWhileTheThreadIsBusyShareOneCommit() async throws {
        try await TestSupport.withTemporaryDirectory { directory in
            let url = directory.appendingPathComponent("state.sqlite")
            let state = try StateDatabase.onDisk(url)
            defer { state.close() }
            let queue = LedgerChangeQueue(database: state.database)
            let contents = (0..<50).map(StoreFixtures.contentID)
            try state.syncState.recordSynced([(contents[0], 1)], peer: nas)
            let before = try walSize(url)

            let gate = DispatchSemaphore(value: 0)
            state.database.thread.async { gate.wait() }
            for content in contents {
                queue.enqueue(.record(.inFlight, contents: [content], peer: nas))
            }
            gate.signal()
            try await state.database.thread.run { () throws(SQLiteError) in }

            #expect(try state.syncState.counts(for: nas)[.inFlight] == 50)
            // One commit writes the ledger's page once; fifty would append it fifty times.
            let frames = (try walSize(url) - before) / (4096 + 24)
            #expect(frames < 10, "\(frames) WAL frames for 50 one-row changes")
        }
    }

    @Test func workSentBetweenChangesStaysBetweenThem() async throws {
        try await TestSupport.withTemporaryDirectory { directory in
            let state = try StateDatabase.onDisk(directory.appendingPathComponent("state.sqlite"))
            defer { state.close() }
            let queue = LedgerChangeQueue(database: state.database)
            let content = StoreFixtures.contentID(1)
            let store = state.syncState, nas = nas
            let seen = Mutex<SyncState?>(nil)

            let gate = DispatchSemaphore(value: 0)
            state.database.thread.async { gate.wait() }
            queue.enqueue(.record(.inFlight, contents: [content], peer: nas))
            // What `SyncStateStore.onDatabaseThread` does: seal, then send the work.
            queue.seal()
            state.database.thread.async { seen.withLock { $0 = try? store.state(of: content, for: nas) } }
            queue.enqueue(.synced([(content, UInt64(1))], peer: nas))
            gate.signal()
            try await state.database.thread.run { () throws(SQLiteError) in }

            #expect(seen.withLock { $0 } == .inFlight, "the later change was committed before the work sent ahead of it")
            #expect(try store.state(of: content, for: nas) == .synced)
        }
    }

    private func walSize(_ url: URL) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: url.path + "-wal")[.size] as? Int)
    }
}
