import Foundation
import Testing
@testable import LocalFirstSync
@testable import LFSyncStore
@testable import LFSyncSystem
@testable import LFSyncContent
@testable import LFSyncCrypto

@Suite("Sync state ledger")
struct SyncStateStoreTests {
    let nas: PeerKey = "nas"
    let laptop: PeerKey = "laptop"

    @Test func recordsAndReadsStates() throws {
        let store = try SyncStateStore.inMemory()
        let content = StoreFixtures.contentID(1)
        #expect(try store.state(of: content, for: nas) == nil)
        for state in SyncState.allCases where state != .interrupted {  // read, never written
            try store.record(state, for: [content], peer: nas)
            #expect(try store.state(of: content, for: nas) == state)
        }
    }

    /// What a received content is made of comes back as recorded, and only a list that
    /// hashes to its content ID is trusted (a damaged row is as good as none).
    @Test func compositionsRoundTripAndADamagedOneIsIgnored() throws {
        let store = try SyncStateStore.inMemory()
        let files: SyncStateStore.Composition = [(.primary, Hash256(bytes: [UInt8](repeating: 1, count: 32))!),
                                                 (.livePhotoVideo, Hash256(bytes: [UInt8](repeating: 2, count: 32))!)]
        let content = ContentID(files: files.map { ($0.role, $0.fileHash) })
        let other = StoreFixtures.contentID(7)
        try store.recordCompositions([(content, files), (other, files)])
        let read = try store.compositions(of: [content, other, StoreFixtures.contentID(8)])
        #expect(read[content].map { $0.map(\.fileHash) } == files.map(\.fileHash))
        #expect(read[content].map { $0.map(\.role) } == [.primary, .livePhotoVideo])
        #expect(read[other] == nil, "a list that does not hash to its content ID")
        try store.database.write { db throws(SQLiteError) in
            try db.execute("UPDATE content_file SET file_hash = zeroblob(32) WHERE position = 1")
        }
        #expect(try store.compositions(of: [content]).isEmpty)
    }

    @Test func keepsTimestampsAndBytes() throws {
        let store = try SyncStateStore.inMemory()
        let content = StoreFixtures.contentID(1)
        let first = Date(timeIntervalSince1970: 1_700_000_000.123)
        try store.record(.pending, for: [content], peer: nas, bytes: 4_000_000, at: first)
        var entry = try #require(try store.entry(of: content, for: nas))
        #expect(entry.updatedAt == first)
        #expect(entry.bytes == 4_000_000)

        let second = first.addingTimeInterval(60)
        try store.record(.synced, for: [content], peer: nas, at: second)
        entry = try #require(try store.entry(of: content, for: nas))
        #expect(entry.updatedAt == second)
        #expect(entry.bytes == 4_000_000, "nil bytes keeps the known size")
        #expect(entry.state == .synced)
        #expect(entry.peer == nas && entry.content == content)
    }

    /// A repeat push confirms every content again; a row that already says so
    /// must not be rewritten (nothing reaches the disk, no commit waits for an
    /// fsync), while a real change still is.
    @Test func confirmingWhatIsAlreadySyncedWritesNothing() async throws {
        try await TestSupport.withTemporaryDirectory { directory in
            let url = directory.appendingPathComponent("state.sqlite")
            let store = try SyncStateStore.onDisk(url)
            defer { store.close() }
            let contents = (0..<200).map(StoreFixtures.contentID)
            let first = Date(timeIntervalSince1970: 1_700_000_000)
            try store.recordSynced(contents.map { ($0, 10) }, peer: nas, at: first)
            let wal = url.path + "-wal"
            let walSize = { try FileManager.default.attributesOfItem(atPath: wal)[.size] as? Int }
            let before = try #require(try walSize())
            #expect(before > 0)

            try store.recordSynced(contents.map { ($0, 10) }, peer: nas, at: first.addingTimeInterval(60))
            #expect(try walSize() == before, "an unchanged confirmation added WAL frames")
            #expect(try store.entry(of: contents[0], for: nas)?.updatedAt == first)

            // A new size, or a row that said something else, is written with the new time.
            let later = first.addingTimeInterval(120)
            try store.record(.failed, for: [contents[2]], peer: nas, reason: "disk full", at: first)
            try store.recordSynced([(contents[1], 11), (contents[2], 10)], peer: nas, at: later)
            #expect(try walSize() ?? 0 > before)
            let resized = try #require(try store.entry(of: contents[1], for: nas))
            #expect(resized.bytes == 11 && resized.updatedAt == later)
            let recovered = try #require(try store.entry(of: contents[2], for: nas))
            #expect(recovered.state == .synced && recovered.reason == nil && recovered.updatedAt == later)
        }
    }

    /// The store skips confirmations of rows it knows say synced; another
    /// process on the same state directory may have changed such a row since,
    /// and its confirmation must then be written (the store must not trust
    /// what it saw before the other commit).
    @Test func aRowAnotherConnectionChangedIsConfirmedAgain() async throws {
        try await TestSupport.withTemporaryDirectory { directory in
            let url = directory.appendingPathComponent("state.sqlite")
            let store = try SyncStateStore.onDisk(url)
            defer { store.close() }
            let other = try SyncStateStore.onDisk(url)
            defer { other.close() }
            let contents = (0..<3).map(StoreFixtures.contentID)
            try store.recordSynced(contents.map { ($0, 10) }, peer: nas)
            try store.recordSynced(contents.map { ($0, 10) }, peer: nas)

            try other.record(.failed, for: [contents[1]], peer: nas, reason: "removed on the NAS")
            try store.recordSynced(contents.map { ($0, 10) }, peer: nas)
            #expect(try store.state(of: contents[1], for: nas) == .synced)

            // And a mark the other connection made is not skipped as if the row still said synced.
            try other.recordSynced([(contents[2], 10)], peer: nas)
            try other.record(.pending, for: [contents[0]], peer: nas)
            try store.record(.inFlight, for: [contents[0]], peer: nas, unlessSynced: true)
            #expect(try store.state(of: contents[0], for: nas) == .inFlight)
        }
    }

    /// A content offered again in the same push goes back to in flight; its next
    /// confirmation must be written even though the store saw it synced before.
    @Test func aRowMovedAwayFromSyncedIsConfirmedAgain() async throws {
        let store = try SyncStateStore.inMemory()
        let content = StoreFixtures.contentID(7)
        try store.recordSynced([(content, 10)], peer: nas)
        try store.record(.inFlight, for: [content], peer: nas)
        #expect(try store.state(of: content, for: nas) == .inFlight)
        try store.recordSynced([(content, 10)], peer: nas)
        #expect(try store.state(of: content, for: nas) == .synced)
        // Queued changes take the same path.
        store.enqueue(.record(.inFlight, contents: [content], peer: nas))
        store.enqueue(.synced([(content, UInt64(10))], peer: nas))
        store.enqueue(.record(.pending, contents: [content], peer: laptop))
        await store.barrier()
        #expect(try store.state(of: content, for: nas) == .synced)
    }

    @Test func peersAreIsolated() throws {
        let store = try SyncStateStore.inMemory()
        let contents = (0..<10).map(StoreFixtures.contentID)
        try store.record(.pending, for: contents, peer: nas)
        try store.record(.pending, for: contents, peer: laptop)

        try store.record(.synced, for: Array(contents.prefix(4)), peer: nas)
        try store.record(.failed, for: [contents[9]], peer: laptop, reason: "disk full")

        #expect(try store.counts(for: nas) == [.synced: 4, .pending: 6, .inFlight: 0, .interrupted: 0, .failed: 0])
        #expect(try store.counts(for: laptop) == [.synced: 0, .pending: 9, .inFlight: 0, .interrupted: 0, .failed: 1])
        #expect(try store.state(of: contents[0], for: laptop) == .pending)
        #expect(try store.state(of: contents[9], for: nas) == .pending)
        #expect(try store.failureReason(of: contents[9], for: nas) == nil)
        #expect(try store.peers() == [laptop, nas])
        #expect(try store.counts(for: "unknown-peer") == [.synced: 0, .pending: 0, .inFlight: 0, .interrupted: 0, .failed: 0])
    }

    @Test func failureReasonFollowsTheState() throws {
        let store = try SyncStateStore.inMemory()
        let content = StoreFixtures.contentID(1)
        try store.record(.failed, for: [content], peer: nas, reason: "peer declined")
        #expect(try store.failureReason(of: content, for: nas) == "peer declined")
        try store.record(.synced, for: [content], peer: nas)
        #expect(try store.failureReason(of: content, for: nas) == nil)
        #expect(try store.entry(of: content, for: nas)?.reason == nil, "a new state clears the old reason")

        try store.record(.failed, for: [content], peer: nas, reason: String(repeating: "x", count: 50_000))
        #expect(try store.failureReason(of: content, for: nas)?.count == SyncStateStore.maxReasonLength)
    }

    @Test func batchIsAllOrNothing() throws {
        let state = try StateDatabase.inMemory()
        let store = state.syncState
        try state.database.withDatabase { db throws(SQLiteError) in
            // Make the third row of the batch fail.
            try db.execute("""
                CREATE TRIGGER reject AFTER INSERT ON sync_state
                WHEN NEW.content_id = x'\(StoreFixtures.hash(3).hex)'
                BEGIN SELECT RAISE(ABORT, 'rejected'); END
                """)
        }
        #expect(throws: SQLiteError.self) {
            try store.record(.synced, for: (1...5).map(StoreFixtures.contentID), peer: nas)
        }
        #expect(try store.counts(for: nas)[.synced] == 0)
        #expect(try store.peers().isEmpty)
    }

    @Test func notSyncedFilterOn100kCandidates() throws {
        let store = try SyncStateStore.inMemory()
        let candidates = (0..<100_000).map(StoreFixtures.contentID)
        try store.record(.synced, for: candidates.enumerated().filter { $0.offset % 3 == 0 }.map(\.element), peer: nas)
        try store.record(.failed, for: candidates.enumerated().filter { $0.offset % 3 == 1 }.map(\.element), peer: nas, reason: "x")
        try store.record(.synced, for: candidates, peer: laptop)

        // Shuffled deterministically, with a duplicate and an unknown ID, to check order is the caller's.
        var shuffled = candidates
        var generator = SplitMix64(seed: 7)
        shuffled.shuffle(using: &generator)
        shuffled.append(shuffled[0])
        shuffled.append(StoreFixtures.contentID(-1))
        let synced = Set(candidates.enumerated().filter { $0.offset % 3 == 0 }.map(\.element))

        let result = try store.contentIDs(notSyncedWith: nas, from: shuffled)
        #expect(result == shuffled.filter { !synced.contains($0) })
        #expect(try store.contentIDs(notSyncedWith: nas, from: candidates).count == 66_666)
        #expect(try store.contentIDs(notSyncedWith: laptop, from: shuffled) == [StoreFixtures.contentID(-1)])
        #expect(try store.contentIDs(notSyncedWith: "new-peer", from: shuffled) == shuffled)
        #expect(try store.contentIDs(in: .failed, for: nas).count == 33_333)
        #expect(try store.counts(for: nas) == [.synced: 33_334, .failed: 33_333, .pending: 0, .inFlight: 0, .interrupted: 0])
    }

    @Test func contentIDsInStateAreSorted() throws {
        let store = try SyncStateStore.inMemory()
        let contents = [5, 1, 3].map(StoreFixtures.contentID)
        try store.record(.inFlight, for: contents, peer: nas)
        #expect(try store.contentIDs(in: .inFlight, for: nas) == contents.sorted())
        #expect(try store.contentIDs(in: .synced, for: nas).isEmpty)
    }

    @Test func corruptRowsReadAsNoRecord() throws {
        let state = try StateDatabase.inMemory()
        let store = state.syncState
        let (bogus, blobState, good) = (StoreFixtures.contentID(1), StoreFixtures.contentID(2), StoreFixtures.contentID(3))
        try store.record(.synced, for: [bogus, blobState, good], peer: nas)
        try state.database.withDatabase { db throws(SQLiteError) in
            try db.execute("UPDATE sync_state SET state = 'bogus' WHERE content_id = x'\(bogus.hex)'")
            try db.execute("UPDATE sync_state SET state = x'FF00' WHERE content_id = x'\(blobState.hex)'")
            // A content ID of the wrong length, and a NULL-ish state, straight into the table.
            try db.execute("INSERT INTO sync_state VALUES ('nas', x'0102', 'synced', NULL, NULL, 0, NULL)")
            try db.execute("INSERT INTO sync_state VALUES ('nas', x'\(StoreFixtures.hash(4).hex)', '', 7, 'many', 'soon', 'who')")
            // A state only ever read, never stored: a row that says it is no row.
            try db.execute("INSERT INTO sync_state VALUES ('nas', x'\(StoreFixtures.hash(5).hex)', 'interrupted', NULL, NULL, 0, NULL)")
        }
        #expect(try store.state(of: bogus, for: nas) == nil)
        #expect(try store.state(of: blobState, for: nas) == nil)
        #expect(try store.state(of: StoreFixtures.contentID(4), for: nas) == nil)
        #expect(try store.state(of: StoreFixtures.contentID(5), for: nas) == nil)
        #expect(try store.entry(of: good, for: nas)?.state == .synced)
        #expect(try store.counts(for: nas) == [.synced: 2, .pending: 0, .inFlight: 0, .interrupted: 0, .failed: 0])
        #expect(try store.contentIDs(in: .synced, for: nas) == [good])
        #expect(try store.contentIDs(notSyncedWith: nas, from: [bogus, blobState, good]) == [bogus, blobState])

        // Recording again heals the row.
        try store.record(.pending, for: [bogus], peer: nas)
        #expect(try store.state(of: bogus, for: nas) == .pending)
    }

    @Test func durableAcrossReopen() async throws {
        try await TestSupport.withTemporaryDirectory { directory in
            let url = directory.appendingPathComponent("nested/state/lfsync.sqlite")
            let contents = (0..<100).map(StoreFixtures.contentID)
            do {
                let store = try SyncStateStore.onDisk(url)
                try store.record(.synced, for: contents, peer: nas, bytes: 10)
                try store.record(.failed, for: [contents[0]], peer: laptop, reason: "timeout")
                store.close()
                #expect(throws: SQLiteError.closed) { try store.state(of: contents[0], for: nas) }
            }
            #expect(FileManager.default.fileExists(atPath: url.path))
            #expect(!FileManager.default.fileExists(atPath: url.path + "-wal"), "a clean close checkpoints the WAL")

            let reopened = try SyncStateStore.onDisk(url)
            #expect(try reopened.counts(for: nas)[.synced] == 100)
            #expect(try reopened.failureReason(of: contents[0], for: laptop) == "timeout")
            #expect(try reopened.entry(of: contents[5], for: nas)?.bytes == 10)
        }
    }

    @Test func writesSurviveWithoutAnExplicitClose() async throws {
        try await TestSupport.withTemporaryDirectory { directory in
            let url = directory.appendingPathComponent("lfsync.sqlite")
            let content = StoreFixtures.contentID(1)
            // A second connection sees committed rows while the first is still open.
            let writer = try SyncStateStore.onDisk(url)
            try writer.record(.synced, for: [content], peer: nas)
            let reader = try SyncStateStore.onDisk(url)
            #expect(try reader.state(of: content, for: nas) == .synced)
        }
    }

    @Test func peerKeyIsAPlainStringInJSON() throws {
        let data = try JSONEncoder().encode([PeerKey("dev-a")])
        #expect(String(decoding: data, as: UTF8.self) == #"["dev-a"]"#)
        #expect(try JSONDecoder().decode([PeerKey].self, from: data) == ["dev-a"])
    }

    /// A row in flight belongs to the run that wrote it: this process's rows read in flight,
    /// a row of a run that is gone (its PID no longer started when it was recorded) reads
    /// interrupted — in `state`, `entry`, `states`, `totals` and `contentIDs(in:)` alike.
    @Test func rowsInFlightOfARunThatIsGoneReadInterrupted() throws {
        let state = try StateDatabase.inMemory()
        let store = state.syncState
        let (mine, theirs, old) = (StoreFixtures.contentID(1), StoreFixtures.contentID(2), StoreFixtures.contentID(3))
        try store.record(.inFlight, for: [mine], peer: nas)
        try state.database.withDatabase { db throws(SQLiteError) in
            // A run that was: this machine's PID 1 never started at tick 1.
            try db.execute("INSERT INTO ledger_run (id, pid, boot, started) VALUES (99, 1, 'another boot', 1)")
            try db.execute("INSERT INTO sync_state VALUES ('nas', x'\(theirs.hex)', 'inFlight', NULL, 10, 0, 99)")
            // In flight from before runs were recorded.
            try db.execute("INSERT INTO sync_state VALUES ('nas', x'\(old.hex)', 'inFlight', NULL, 20, 0, NULL)")
        }
        #expect(try store.state(of: mine, for: nas) == .inFlight)
        #expect(try store.state(of: theirs, for: nas) == .interrupted)
        #expect(try store.entry(of: old, for: nas)?.state == .interrupted)
        #expect(try store.states(of: [mine, theirs, old], for: nas) == [mine: .inFlight, theirs: .interrupted, old: .interrupted])
        #expect(try store.counts(for: nas) == [.synced: 0, .pending: 0, .inFlight: 1, .interrupted: 2, .failed: 0])
        #expect(try store.totals(for: nas)[.interrupted]?.bytes == 30)
        #expect(try store.contentIDs(in: .interrupted, for: nas) == [theirs, old].sorted())
        #expect(try store.contentIDs(in: .inFlight, for: nas) == [mine])
        // Written again by this run, it is this run's.
        try store.record(.inFlight, for: [theirs], peer: nas)
        #expect(try store.state(of: theirs, for: nas) == .inFlight)
        // Any other state belongs to no run.
        try store.record(.failed, for: [mine], peer: nas, reason: "x")
        #expect(try store.state(of: mine, for: nas) == .failed)
    }
}
