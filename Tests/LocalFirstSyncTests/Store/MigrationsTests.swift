import Foundation
import Testing
@testable import LocalFirstSync
@testable import LFSyncStore

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
        #expect(tables == ["chunk_file", "chunk_location", "library", "scan_cache", "sync_state"])
    }
}
