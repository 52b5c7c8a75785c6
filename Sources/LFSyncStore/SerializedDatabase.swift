import LFSyncSystem
import Synchronization

/// The one SQLite connection the stores of a `StateDatabase` share, guarded by
/// a `Mutex`.
///
/// Why a mutex and not an actor: every store call is a short, synchronous run
/// of SQLite that never suspends, and the callers are both synchronous code
/// (the scanner's workers) and actors (the engine). A lock keeps the API
/// synchronous — no `await` on a cache lookup, no executor hop per file —
/// while still giving the connection exactly one user at a time, which is what
/// `SQLITE_OPEN_NOMUTEX` requires. Three actors would also need a shared
/// executor to share one connection; one lock is simpler. The lock is not
/// reentrant: store methods never call each other while holding it.
package final class SerializedDatabase: Sendable {
    private let connection: LockedState<SQLiteDatabase?>
    /// Where callers on the cooperative pool send their commits: each waits
    /// for an fsync (`synchronous=FULL`), which must not hold a pool thread.
    package let thread = BlockingQueue(label: "lfsync.sqlite")

    package init(_ database: consuming sending SQLiteDatabase) {
        connection = LockedState(database)
    }

    /// Runs `body` with exclusive use of the connection.
    package func withDatabase<R: Sendable>(_ body: (SQLiteDatabase) throws(SQLiteError) -> R) throws(SQLiteError) -> R {
        try connection.withLock { (database: inout sending SQLiteDatabase?) throws(SQLiteError) -> R in
            guard let database else { throw .closed }
            return try body(database)
        }
    }

    /// Runs `body` inside one transaction (see `SQLiteDatabase.transaction`).
    package func write<R: Sendable>(_ body: (SQLiteDatabase) throws(SQLiteError) -> R) throws(SQLiteError) -> R {
        try withDatabase { database throws(SQLiteError) in
            try database.transaction { () throws(SQLiteError) in try body(database) }
        }
    }

    /// Frees the page cache memory the connection holds but is not using
    /// (`sqlite3_db_release_memory`): a long-running process calls it once a burst
    /// of work is done, so the cache a big scan filled does not stay resident.
    package func releaseMemory() {
        try? withDatabase { database throws(SQLiteError) in database.releaseMemory() }
    }

    /// Closes the connection (checkpointing the WAL); later calls throw `.closed`.
    package func close() {
        connection.withLock { $0 = nil }
    }
}
