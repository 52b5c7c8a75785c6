import Synchronization
import LFSyncSystem

/// Applies `LedgerChange`s on one connection, remembering which rows already
/// say what a change would write (`SyncedLedgerRows`), so that confirming what
/// is already synced costs no SQLite work at all.
final class LedgerWriter: Sendable {
    private let known = LockedState(SyncedLedgerRows())

    /// Applies `change` in the caller's transaction or savepoint. What it learnt
    /// is forgotten if it throws; a caller whose transaction then fails to commit
    /// calls `forgetAll()`.
    func apply(_ change: LedgerChange, to db: SQLiteDatabase, run: Int64? = nil) throws(SQLiteError) {
        try known.withLock { (known: inout SyncedLedgerRows) throws(SQLiteError) in
            do throws(SQLiteError) {
                try known.refresh(db)
                try change.apply(to: db, known: &known, run: run)
            } catch {
                known.forgetAll()
                throw error
            }
        }
    }

    /// A transaction that applied changes was rolled back: the rows say what they said before.
    func forgetAll() {
        known.withLock { $0.forgetAll() }
    }
}
