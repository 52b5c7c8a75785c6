import Foundation
import Testing
@testable import LocalFirstSync
@testable import LFSyncStore
import LFSyncSystem
import LFSyncCrypto
import LFSyncContent
import LFSyncTransport
import LFSyncTCP
import LFSyncDiscovery
import LFSyncWire

@Suite("SQLite wrapper")
struct SQLiteDatabaseTests {
    /// The ledger names every peer and file: a new one, and its WAL, are private to their user.
    /// In a process of its own (an exit test): the umask belongs to the whole
    /// process, and other tests create files beside this one.
    @Test func aNewLedgerIsCreatedPrivate() async {
        await #expect(processExitsWith: .success) {
            umask(0o022)
            try await TestSupport.withTemporaryDirectory { root in
                let url = root.appendingPathComponent("ledger.sqlite")
                let store = try SyncStateStore.onDisk(url)
                let content = ContentID(hash: try #require(Hash256(bytes: [UInt8](repeating: 7, count: 32))))
                try store.recordSynced([(content: content, bytes: 1)], peer: PeerKey(rawValue: "peer"))
                for name in ["ledger.sqlite", "ledger.sqlite-wal"] {
                    var status = stat()
                    #expect(lstat(root.appendingPathComponent(name).path, &status) == 0, "\(name) exists")
                    #expect(status.st_mode & 0o777 == 0o600, "\(name) mode \(String(status.st_mode & 0o777, radix: 8))")
                }
                store.close()
            }
        }
    }

    @Test func bindsAndReadsEveryType() throws {
        let db = try SQLiteDatabase(.memory)
        try db.execute("CREATE TABLE t (i, r, s, b, n, es, eb)")
        let text = "héllo\u{0}wörld 📷"
        try db.prepare("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?)")
            .execute([.integer(.min), .real(1.5), .text(text), .blob([0, 1, 255]), .null, "", .blob([])])

        let row = try #require(try db.prepare("SELECT i, r, s, b, n, es, eb FROM t").firstRow { row in
            (row.int64(at: 0), row.double(at: 1), row.text(at: 2), row.blob(at: 3),
             row.isNull(at: 4), row.text(at: 5), row.blob(at: 6), row.isNull(at: 6), row.value(at: 4))
        })
        #expect(row.0 == .min)
        #expect(row.1 == 1.5)
        #expect(row.2 == text)
        #expect(row.3 == [0, 1, 255])
        #expect(row.4)
        #expect(row.5 == "")
        #expect(row.6 == [])
        #expect(!row.7, "an empty blob is not NULL")
        #expect(row.8 == .null)
    }

    @Test func typedBindOverloadsAndUnsignedRoundTrip() throws {
        let db = try SQLiteDatabase(.memory)
        try db.execute("CREATE TABLE t (u INTEGER, d REAL, s TEXT, b BLOB, n)")
        let insert = try db.prepare("INSERT INTO t VALUES (?, ?, ?, ?, ?)")
        try insert.bind(Int64(bitPattern: UInt64.max), at: 1)
        try insert.bind(-0.25, at: 2)
        try insert.bind("x", at: 3)
        try insert.bind([7, 8] as [UInt8], at: 4)
        try insert.bindNull(at: 5)
        try insert.run()
        let values = try db.prepare("SELECT u, d, s, b, n FROM t").rows { row in
            [row.value(at: 0), row.value(at: 1), row.value(at: 2), row.value(at: 3), row.value(at: 4)]
        }
        #expect(values == [[.integer(-1), .real(-0.25), .text("x"), .blob([7, 8]), .null]])
        #expect(try db.prepare("SELECT u FROM t").firstRow { $0.uint64(at: 0) } == UInt64.max)
        #expect(try db.prepare("SELECT n FROM t").firstRow { $0.optionalInt64(at: 0) } == .some(nil))
    }

    @Test func wrongParameterCountIsAnError() throws {
        let db = try SQLiteDatabase(.memory)
        let statement = try db.prepare("SELECT ?, ?")
        #expect(throws: SQLiteError.self) { try statement.execute([1]) }
    }

    @Test func prepareRejectsSeveralStatementsAndBadSQL() throws {
        let db = try SQLiteDatabase(.memory)
        #expect(throws: SQLiteError.misuse("prepare takes one statement; use execute for scripts: SELECT 1; SELECT 2")) {
            try db.prepare("SELECT 1; SELECT 2")
        }
        _ = try db.prepare("SELECT 1;  \n")
        let error = #expect(throws: SQLiteError.self) { try db.prepare("SELEKT 1") }
        #expect(error?.resultCode == 1)
        #expect(error?.description.contains("syntax error") == true)
    }

    @Test func transactionCommitsOnReturn() throws {
        let db = try SQLiteDatabase(.memory)
        try db.execute("CREATE TABLE t (x)")
        let value = try db.transaction { () throws(SQLiteError) in
            try db.execute("INSERT INTO t VALUES (1)")
            return 42
        }
        #expect(value == 42)
        #expect(try count(db) == 1)
        #expect(db.isAutocommit)
    }

    @Test func transactionRollsBackOnThrow() throws {
        let db = try SQLiteDatabase(.memory)
        try db.execute("CREATE TABLE t (x)")
        #expect(throws: SQLiteError.other(code: 99, message: "boom")) {
            try db.transaction { () throws(SQLiteError) in
                try db.execute("INSERT INTO t VALUES (1)")
                throw SQLiteError.other(code: 99, message: "boom")
            }
        }
        #expect(try count(db) == 0)
        #expect(db.isAutocommit)
    }

    @Test func nestedTransactionRollsBackOnlyItsOwnWork() throws {
        let db = try SQLiteDatabase(.memory)
        try db.execute("CREATE TABLE t (x)")
        try db.transaction { () throws(SQLiteError) in
            try db.execute("INSERT INTO t VALUES (1)")
            _ = try? db.transaction { () throws(SQLiteError) in
                try db.execute("INSERT INTO t VALUES (2)")
                throw SQLiteError.other(code: 99, message: "inner")
            }
            try db.transaction { () throws(SQLiteError) in try db.execute("INSERT INTO t VALUES (3)") }
        }
        let values = try db.prepare("SELECT x FROM t ORDER BY x").rows { $0.int64(at: 0) }
        #expect(values == [1, 3])
    }

    @Test func constraintViolationIsTyped() throws {
        let db = try SQLiteDatabase(.memory)
        try db.execute("CREATE TABLE t (x UNIQUE)")
        let insert = try db.cachedStatement("INSERT INTO t VALUES (?)")
        try insert.execute([1])
        let error = #expect(throws: SQLiteError.self) { try insert.execute([1]) }
        guard case let .constraint(message) = error else {
            Issue.record("expected .constraint, got \(String(describing: error))")
            return
        }
        #expect(message.contains("UNIQUE"))
        // The statement is usable again after the error.
        try insert.execute([2])
        #expect(try count(db) == 2)
    }

    @Test func foreignKeysAreEnforced() throws {
        let db = try SQLiteDatabase(.memory)
        try db.execute("CREATE TABLE p (id INTEGER PRIMARY KEY); CREATE TABLE c (p REFERENCES p(id))")
        #expect(try db.pragma("foreign_keys") == "1")
        let error = #expect(throws: SQLiteError.self) { try db.execute("INSERT INTO c VALUES (5)") }
        #expect(error?.resultCode == 19)
    }

    @Test func cachedStatementsAreReusedAndReset() throws {
        let db = try SQLiteDatabase(.memory)
        let first = try db.cachedStatement("SELECT ?")
        try first.bind(7, at: 1)
        _ = try first.step()
        let second = try db.cachedStatement("SELECT ?")
        #expect(first === second)
        #expect(try second.firstRow([1]) { $0.int64(at: 0) } == 1)
        #expect(try db.cachedStatement("SELECT ?").step().map { $0.isNull(at: 0) } == true, "bindings cleared")
    }

    @Test func userVersionRoundTrips() throws {
        let db = try SQLiteDatabase(.memory)
        #expect(try db.userVersion() == 0)
        try db.setUserVersion(12)
        #expect(try db.userVersion() == 12)
    }

    @Test func inMemoryConfiguration() throws {
        let db = try SQLiteDatabase(.memory, busyTimeout: .milliseconds(1234))
        #expect(try db.journalMode() == "memory")
        #expect(try db.pragma("busy_timeout") == "1234")
        #expect(try db.pragma("synchronous") == "2")
    }

    /// A library's index takes inserts keyed by random chunk hashes: with SQLite's default
    /// 2 MB cache, a first scan of 200,000 files wrote 1.8 GB into its 100 MB file.
    @Test func cacheDatabasesKeepMorePagesInMemory() throws {
        let ledger = try SQLiteDatabase(.memory)
        #expect(try ledger.pragma("cache_size") == "-2000", "SQLite's default for the ledger")
        let index = try SQLiteDatabase(.memory, durability: .cache)
        #expect(try index.pragma("cache_size") == "-\(SQLiteDatabase.indexCacheKiB)")
        #expect(SQLiteDatabase.indexCacheKiB == 16 << 10)
        #expect(try index.pragma("synchronous") == "1", "NORMAL: a cache need not survive power loss")
    }

    @Test func fileDatabaseUsesWALAndWaitsThenReportsBusy() async throws {
        try await TestSupport.withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("test.sqlite").path
            let holder = try SQLiteDatabase(.file(path: path))
            #expect(try holder.journalMode() == "wal")
            #expect(try holder.pragma("busy_timeout") == "5000")
            try holder.execute("CREATE TABLE t (x)")

            let waiter = try SQLiteDatabase(.file(path: path), busyTimeout: .milliseconds(50))
            try holder.execute("BEGIN IMMEDIATE")
            let error = #expect(throws: SQLiteError.self) {
                try waiter.transaction { () throws(SQLiteError) in try waiter.execute("INSERT INTO t VALUES (1)") }
            }
            guard case .busy = error else {
                Issue.record("expected .busy, got \(String(describing: error))")
                return
            }
            try holder.execute("COMMIT")
            // WAL: a reader is not blocked by a writer.
            try holder.execute("BEGIN IMMEDIATE; INSERT INTO t VALUES (2)")
            #expect(try count(waiter) == 0)
            try holder.execute("COMMIT")
            #expect(try count(waiter) == 1)
        }
    }

    @Test func garbageFileIsReportedAsCorrupt() async throws {
        try await TestSupport.withTemporaryDirectory { directory in
            let url = directory.appendingPathComponent("garbage.sqlite")
            try Data(repeating: 0x42, count: 4096).write(to: url)
            let error = #expect(throws: SQLiteError.self) { try SQLiteDatabase(.file(path: url.path)) }
            guard case .corrupt = error else {
                Issue.record("expected .corrupt, got \(String(describing: error))")
                return
            }
        }
    }

    @Test func unopenablePathIsTyped() throws {
        let error = #expect(throws: SQLiteError.self) {
            try SQLiteDatabase(.file(path: "/nonexistent-lfsync-dir/sub/x.sqlite"))
        }
        guard case .cannotOpen = error else {
            Issue.record("expected .cannotOpen, got \(String(describing: error))")
            return
        }
    }

    private func count(_ db: SQLiteDatabase) throws -> Int64 {
        try db.prepare("SELECT count(*) FROM t").firstRow { $0.int64(at: 0) } ?? -1
    }
}
