import Foundation
import Testing
@testable import LocalFirstSync
@testable import LFSyncStore
@testable import LFSyncSystem
@testable import LFSyncCrypto

@Suite("Migrations")
struct MigrationsTests {
    let migrations = Migrations([
        Migration(version: 1, name: "one", sql: "CREATE TABLE a (x)"),
        Migration(version: 2, name: "two", sql: "CREATE TABLE b (y); INSERT INTO b VALUES (1)"),
    ])

    @Test func appliesInOrderAndIsIdempotent() throws {
        let db = try SQLiteDatabase(.memory)
        let first = try migrations.apply(to: db)
        #expect(first.from == 0 && first.to == 2)
        #expect(try db.userVersion() == 2)
        let second = try migrations.apply(to: db)
        #expect(second.from == 2 && second.to == 2)
        #expect(try db.prepare("SELECT count(*) FROM b").firstRow { $0.int64(at: 0) } == 1, "step 2 ran once")
    }

    @Test func resumesFromAnOlderVersion() throws {
        let db = try SQLiteDatabase(.memory)
        try Migrations(Array(migrations.steps.prefix(1))).apply(to: db)
        #expect(try db.userVersion() == 1)
        let result = try migrations.apply(to: db)
        #expect(result.from == 1 && result.to == 2)
    }

    @Test func newerDatabaseIsRefused() throws {
        let db = try SQLiteDatabase(.memory)
        try db.setUserVersion(5)
        #expect(throws: SQLiteError.schemaTooNew(found: 5, supported: 2)) { try migrations.apply(to: db) }
        #expect(try db.userVersion() == 5)
    }

    @Test func negativeVersionIsCorrupt() throws {
        let db = try SQLiteDatabase(.memory)
        try db.setUserVersion(-3)
        let error = #expect(throws: SQLiteError.self) { try migrations.apply(to: db) }
        guard case .corrupt = error else {
            Issue.record("expected .corrupt, got \(String(describing: error))")
            return
        }
    }

    @Test func failingStepLeavesTheDatabaseUntouched() throws {
        let db = try SQLiteDatabase(.memory)
        let broken = Migrations([
            Migration(version: 1, name: "one", sql: "CREATE TABLE a (x)"),
            Migration(version: 2, name: "broken", sql: "CREATE TABLE b (y); THIS IS NOT SQL"),
        ])
        #expect(throws: SQLiteError.self) { try broken.apply(to: db) }
        #expect(try db.userVersion() == 0)
        #expect(try db.prepare("SELECT count(*) FROM sqlite_schema").firstRow { $0.int64(at: 0) } == 0)
    }

    @Test func stateDatabaseRefusesAFileFromTheFuture() async throws {
        try await TestSupport.withTemporaryDirectory { directory in
            let url = directory.appendingPathComponent("lfsync.sqlite")
            do {
                let db = try SQLiteDatabase(.file(path: url.path))
                try db.setUserVersion(StateSchema.migrations.latestVersion + 1)
            }
            #expect(throws: SQLiteError.schemaTooNew(
                found: StateSchema.migrations.latestVersion + 1, supported: StateSchema.migrations.latestVersion)
            ) {
                try StateDatabase.onDisk(url)
            }
        }
    }

    @Test func stateSchemaMigratesAFreshDatabase() throws {
        let db = try SQLiteDatabase(.memory)
        try StateSchema.migrations.apply(to: db)
        let tables = try db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name").rows { $0.text(at: 0) }
        #expect(tables == ["chunk_file", "chunk_location", "content_file", "hash_upgrade", "history_library", "kept_version", "ledger_run",
                           "legacy_scan_cache", "library", "offloaded", "path_history", "path_progress", "scan_cache", "sync_state"])
    }
}

/// Migration 4 (keyed content hashes): a cache written with the old hashes is emptied, its
/// library marked for the upgrade with its old file hashes kept, and the ledger left alone.
@Suite struct HashChangeMigrationTests {
    @Test func aVersion3CacheIsEmptiedMarkedAndItsOldHashesKept() throws {
        let db = try SQLiteDatabase(.memory)
        try Migrations(Array(StateSchema.migrations.steps.prefix(3))).apply(to: db)
        var old = ByteWriter()
        old.write(UInt8(1))
        old.writeString("a.jpg")
        old.write(UInt64(5))
        old.write(Int64(42))
        old.write(contentsOf: [UInt8](repeating: 0xAB, count: 32))
        old.write(UInt32(1))
        old.write(UInt32(5))
        old.write(contentsOf: [UInt8](repeating: 0xAB, count: 32))
        try db.execute("INSERT INTO library (id, root) VALUES (1, '')")
        try db.prepare("INSERT INTO scan_cache (library_id, path, size, mtime_ns, inode, manifest) VALUES (1, 'a.jpg', 5, 42, 7, ?)")
            .execute([.blob(old.bytes)])
        try db.execute("INSERT INTO chunk_file (id, library_id, path, size, mtime_ns, inode) VALUES (1, 1, 'a.jpg', 5, 42, 7)")
        try db.prepare("INSERT INTO chunk_location (file_id, byte_offset, length, hash) VALUES (1, 0, 5, ?)").execute([.blob([UInt8](repeating: 0xAB, count: 32))])
        try db.prepare("INSERT INTO sync_state (peer, content_id, state, updated_at_ms) VALUES ('nas', ?, 'synced', 1)").execute([.blob([UInt8](repeating: 1, count: 32))])

        try StateSchema.migrations.apply(to: db)
        func count(_ table: String) throws -> Int64 { try db.prepare("SELECT count(*) FROM \(table)").rows { $0.int64(at: 0) }.first ?? -1 }
        #expect(try count("scan_cache") == 0 && count("chunk_file") == 0 && count("chunk_location") == 0)
        #expect(try count("sync_state") == 1, "the ledger waits for the upgrade to rename its rows")
        #expect(try db.prepare("SELECT library_id FROM hash_upgrade").rows { $0.int64(at: 0) } == [1])
        let database = SerializedDatabase(db)
        let cache = ScanCache(database: database, libraryID: 1)
        #expect(try cache.awaitsHashUpgrade())
        #expect(try cache.legacyFileHashes() == ["a.jpg": LegacyFileHash(size: 5, modificationTimeNs: 42, fileHash: Hash256(bytes: [UInt8](repeating: 0xAB, count: 32))!)])
        try cache.finishHashUpgrade()
        #expect(try !cache.awaitsHashUpgrade())
        #expect(try cache.legacyFileHashes().isEmpty)
    }

    /// Rows move to their new IDs for every peer; a peer with a row under the new ID keeps it.
    @Test func carryingOverRenamesEveryPeersRowsAndKeepsNewerOnes() throws {
        let ledger = try SyncStateStore.inMemory()
        let (old1, old2, new1, new2) = (StoreFixtures.contentID(1), StoreFixtures.contentID(2), StoreFixtures.contentID(11), StoreFixtures.contentID(12))
        try ledger.record(.synced, for: [old1, old2], peer: "nas")
        try ledger.record(.failed, for: [old1], peer: "desktop", reason: "unreachable")
        try ledger.record(.pending, for: [new2], peer: "nas")
        #expect(try ledger.carryOver([(from: old1, to: new1), (from: old2, to: new2)]) == 2)
        #expect(try ledger.state(of: new1, for: "nas") == .synced)
        #expect(try ledger.state(of: new1, for: "desktop") == .failed)
        #expect(try ledger.failureReason(of: new1, for: "desktop") == "unreachable")
        #expect(try ledger.state(of: new2, for: "nas") == .pending, "the row written under the new ID stays")
        #expect(try ledger.state(of: old1, for: "nas") == nil && ledger.state(of: old2, for: "nas") == nil)
        #expect(try ledger.carryOver([(from: old1, to: new1)]) == 0, "a second run finds nothing left")
    }
}
