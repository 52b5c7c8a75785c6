internal import CSQLite
#if canImport(Glibc)
import Glibc
#endif

/// One SQLite connection: the minimal wrapper the stores are built on.
///
/// Deliberately not `Sendable`: a connection is used by one serial executor at
/// a time (`SerializedDatabase` puts it behind a `Mutex`), which is why it is
/// opened with `SQLITE_OPEN_NOMUTEX` and SQLite's own locking is not paid for.
/// Closed when the object goes away, with `sqlite3_close_v2`, which checkpoints
/// the WAL of the last connection and tolerates statements still alive.
///
/// Configuration applied on open, and why:
/// - `journal_mode=WAL` (files only): readers don't block the writer and a
///   commit is one append, not a rewrite of the rollback journal;
/// - `synchronous=FULL`: a ledger row says "this peer has it", so a committed
///   transaction must survive power loss. Writes are batched per transaction,
///   so the extra fsync is paid per batch, not per row. A database that only
///   caches what can be recomputed (a library's scan cache and chunk index)
///   opens with `.cache` instead: `synchronous=NORMAL`, which in WAL mode never
///   corrupts and at worst forgets the last commits after a power loss;
/// - `foreign_keys=ON`: SQLite leaves it off by default; the chunk index relies
///   on `ON DELETE CASCADE`;
/// - a busy timeout: two lfsync processes (a cron run and an interactive one)
///   wait for each other briefly instead of failing at once;
/// - a `.cache` database gets a larger page cache (`indexCacheKiB`): its
///   indexes take inserts in random order;
/// - extended result codes, so errors keep their detail.
package final class SQLiteDatabase {
    package enum Location: Hashable, Sendable {
        case file(path: String)
        /// A private, transient database: tests and dry runs.
        case memory
    }

    /// How much a commit must survive.
    package enum Durability: Sendable {
        /// Power loss included (`synchronous=FULL`): the ledger.
        case full
        /// Crashes of the process, not necessarily of the machine (`synchronous=NORMAL`):
        /// caches of what a rescan can find again.
        case cache
    }

    /// The page cache of a `.cache` database, in KiB: holds the chunk-hash index of about
    /// 300,000 files.
    static let indexCacheKiB = 16 << 10

    package let location: Location
    package let busyTimeout: Duration
    private let handle: OpaquePointer
    private var statementCache: [String: SQLiteStatement] = [:]
    private var savepointDepth = 0

    package init(_ location: Location, busyTimeout: Duration = .seconds(5), durability: Durability = .full) throws(SQLiteError) {
        self.location = location
        self.busyTimeout = busyTimeout
        let path = switch location {
        case let .file(path): path
        case .memory: ":memory:"
        }
        if case .file = location {
            // A new database is created private (0600) before SQLite opens it, so the ledger
            // and the index (which name every file and peer) are not readable by other users;
            // SQLite gives its WAL and shared-memory files the database's own mode.
            let created = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0o600)
            if created >= 0 { close(created) }
        }
        var opened: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let result = sqlite3_open_v2(path, &opened, flags, nil)
        guard let opened else { throw SQLiteError(code: result, message: "out of memory opening \(path)") }
        guard result == SQLITE_OK else {
            // SQLite allocates a handle even on failure, to carry the message.
            let error = SQLiteError(code: result, handle: opened)
            sqlite3_close_v2(opened)
            throw error
        }
        handle = opened
        // From here on `deinit` closes the handle if configuration fails.
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, Self.milliseconds(busyTimeout))
        // The first statement reads the header: a file that is not a database fails here with `.corrupt`.
        if case .file = location {
            _ = try pragma("journal_mode = WAL")
        }
        try execute("PRAGMA synchronous = \(durability == .full ? "FULL" : "NORMAL"); PRAGMA foreign_keys = ON;")
        if durability == .cache {
            // A library's index is keyed by random chunk hashes: with SQLite's default 2 MB of
            // cache, each insert past ~40,000 files reads a page back and a commit spills the
            // rest (a first scan of 200,000 files wrote 1.8 GB for a 100 MB file). The cache
            // only grows as pages are used: a small library never takes it.
            try execute("PRAGMA cache_size = -\(Self.indexCacheKiB)")
        }

    }

    /// See `SerializedDatabase.releaseMemory()`.
    package func releaseMemory() {
        _ = sqlite3_db_release_memory(handle)
    }

    deinit {
        statementCache.removeAll()
        sqlite3_close_v2(handle)
    }

    // MARK: Running SQL

    /// Runs one or more `;`-separated statements that bind nothing (schema,
    /// pragmas, transaction control).
    package func execute(_ sql: String) throws(SQLiteError) {
        var errorMessage: UnsafeMutablePointer<CChar>?
        let result = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        guard result == SQLITE_OK else {
            let message = errorMessage.map { String(cString: $0) }
            sqlite3_free(errorMessage)
            if let message { throw SQLiteError(code: sqlite3_extended_errcode(handle), message: message) }
            throw SQLiteError(code: result, handle: handle)
        }
    }

    /// Compiles exactly one statement. Trailing text (a second statement) is a
    /// misuse: silently ignoring it is how a migration loses half its work.
    func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        try prepare(sql, flags: 0)
    }

    /// The compiled statement for `sql`, prepared once per connection and kept:
    /// for the statements the stores run per row or per lookup. Returned reset
    /// with cleared bindings. Do not use one cached statement in two nested
    /// loops at once; they would share its cursor.
    func cachedStatement(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        if let statement = statementCache[sql] {
            statement.reset()
            statement.clearBindings()
            return statement
        }
        let statement = try prepare(sql, flags: UInt32(SQLITE_PREPARE_PERSISTENT))
        statementCache[sql] = statement
        return statement
    }

    private func prepare(_ sql: String, flags: UInt32) throws(SQLiteError) -> SQLiteStatement {
        var statement: OpaquePointer?
        var tailOffset = 0
        var text = sql
        let result = text.withUTF8 { utf8 -> Int32 in
            utf8.withMemoryRebound(to: CChar.self) { chars in
                var tail: UnsafePointer<CChar>?
                let result = sqlite3_prepare_v3(handle, chars.baseAddress, Int32(clamping: chars.count), flags, &statement, &tail)
                if let tail, let base = chars.baseAddress { tailOffset = tail - base }
                return result
            }
        }
        guard result == SQLITE_OK else {
            let error = SQLiteError(code: result, handle: handle)
            sqlite3_finalize(statement)
            throw error
        }
        let ignorable: Set<UInt8> = [UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"), UInt8(ascii: ";")]
        guard sql.utf8.dropFirst(tailOffset).allSatisfy(ignorable.contains) else {
            sqlite3_finalize(statement)
            throw .misuse("prepare takes one statement; use execute for scripts: \(sql)")
        }
        guard let statement else { throw .misuse("no SQL statement in: \(sql)") }
        return SQLiteStatement(handle: statement, sql: sql)
    }

    /// Runs a pragma and returns its first column as text (`nil` when it returns no row).
    package func pragma(_ pragma: String) throws(SQLiteError) -> String? {
        try prepare("PRAGMA \(pragma)").firstRow { $0.text(at: 0) } ?? nil
    }

    // MARK: Transactions

    /// Runs `body` in a transaction: commits if it returns, rolls back if it throws.
    ///
    /// The outermost level is `BEGIN IMMEDIATE`: it takes the write lock up
    /// front (waiting up to the busy timeout), because a deferred transaction
    /// that reads and then writes can fail with `SQLITE_BUSY` under WAL without
    /// the busy handler ever being consulted. Nested calls become savepoints,
    /// so a store method that uses a transaction can run inside a caller's.
    package func transaction<R>(_ body: () throws(SQLiteError) -> R) throws(SQLiteError) -> R {
        let name = "lfsync_\(savepointDepth)"
        let nested = !isAutocommit
        try execute(nested ? "SAVEPOINT \(name)" : "BEGIN IMMEDIATE")
        savepointDepth += 1
        defer { savepointDepth -= 1 }
        let value: R
        do throws(SQLiteError) {
            value = try body()
            try execute(nested ? "RELEASE \(name)" : "COMMIT")
        } catch {
            // Some errors (SQLITE_FULL, IOERR, NOMEM, BUSY) already rolled the
            // whole transaction back; a ROLLBACK now would only fail again.
            if !isAutocommit {
                try? execute(nested ? "ROLLBACK TO \(name); RELEASE \(name)" : "ROLLBACK")
            }
            throw error
        }
        return value
    }

    /// Runs reads in one read transaction: one snapshot and one round of the
    /// file's locks for all of them, where each statement on its own takes and
    /// releases them (several `fcntl` calls per statement, a measurable cost
    /// when an offer of a thousand files looks up each one). Reads only: a
    /// deferred transaction that then writes can fail with `SQLITE_BUSY` under
    /// WAL. Inside a transaction already, `body` simply runs in it.
    package func readTransaction<R>(_ body: () throws(SQLiteError) -> R) throws(SQLiteError) -> R {
        guard isAutocommit else { return try body() }
        try execute("BEGIN DEFERRED")
        let value: R
        do throws(SQLiteError) {
            value = try body()
        } catch {
            if !isAutocommit { try? execute("ROLLBACK") }
            throw error
        }
        // Nothing was written, so ending it either way loses nothing; but it must end, or
        // every later write on this connection would be a savepoint inside it, never committed.
        if !isAutocommit {
            do throws(SQLiteError) { try execute("COMMIT") } catch { try? execute("ROLLBACK") }
        }
        return value
    }

    /// True outside any transaction.
    package var isAutocommit: Bool { sqlite3_get_autocommit(handle) != 0 }

    // MARK: Facts about the connection

    /// `PRAGMA user_version`: the schema version `Migrations` maintains.
    package func userVersion() throws(SQLiteError) -> Int32 {
        let value = try prepare("PRAGMA user_version").firstRow { $0.int64(at: 0) } ?? 0
        return Int32(truncatingIfNeeded: value)
    }

    package func setUserVersion(_ version: Int32) throws(SQLiteError) {
        // Pragmas take no bound parameters; an Int32 formats to digits only.
        try execute("PRAGMA user_version = \(version)")
    }

    /// `wal` for files, `memory` for in-memory databases.
    package func journalMode() throws(SQLiteError) -> String {
        try pragma("journal_mode") ?? ""
    }

    /// Rows changed by the most recent INSERT, UPDATE or DELETE.
    package var changes: Int { Int(sqlite3_changes64(handle)) }

    package var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    private static func milliseconds(_ duration: Duration) -> Int32 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 0 }
        let (product, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        guard !overflow else { return .max }
        return Int32(clamping: product + attoseconds / 1_000_000_000_000_000)
    }
}
