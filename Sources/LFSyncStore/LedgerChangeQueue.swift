import Synchronization
import LFSyncSystem

/// Ledger changes queued with `SyncStateStore.enqueue`, committed in groups on
/// the database's thread.
///
/// A push marks each offer in flight and confirms receipts a burst at a time,
/// and each of those was a transaction of its own; on the `synchronous=FULL`
/// state database every commit waits for an fsync. While the thread is busy,
/// changes gather here and its next turn commits all of them in one
/// transaction, each in a savepoint of its own (one change that fails does
/// not undo the others).
///
/// Order: changes apply in the order they were queued, and work sent to the
/// thread in between (`SyncStateStore.onDatabaseThread`) stays between them:
/// `seal()` closes the group waiting for its turn, so a change queued after
/// that work joins a later group.
final class LedgerChangeQueue: Sendable {
    private struct Groups {
        var waiting: [Int: [LedgerChange]] = [:]
        /// The group new changes join; nil once sealed or taken.
        var open: Int?
        var nextID = 0
    }

    private let groups = LockedState(Groups())
    private let database: SerializedDatabase
    private let writer: LedgerWriter
    private let runs: LedgerRuns

    init(database: SerializedDatabase, writer: LedgerWriter = LedgerWriter(), runs: LedgerRuns = LedgerRuns()) {
        self.database = database
        self.writer = writer
        self.runs = runs
    }

    func enqueue(_ change: LedgerChange) {
        let newGroup: Int? = groups.withLock { groups in
            if let open = groups.open {
                groups.waiting[open, default: []].append(change)
                return nil
            }
            let id = groups.nextID
            groups.nextID += 1
            groups.waiting[id] = [change]
            groups.open = id
            return id
        }
        guard let newGroup else { return }
        database.thread.async { [self] in commit(group: newGroup) }
    }

    /// Changes queued from now on commit after whatever is sent to the thread next.
    func seal() {
        groups.withLock { $0.open = nil }
    }

    private func commit(group id: Int) {
        let changes = groups.withLock { groups in
            if groups.open == id { groups.open = nil }
            return groups.waiting.removeValue(forKey: id) ?? []
        }
        // In a transaction of its own, before any row names it.
        let run = changes.contains(where: \.marksInFlight) ? runs.id(registeringIn: database) : nil
        // Bookkeeping whose failure the callers ignore anyway (see `SyncStateStore.enqueue`).
        do {
            try database.write { db throws(SQLiteError) in
                for change in changes {
                    do {
                        try db.transaction { () throws(SQLiteError) in try writer.apply(change, to: db, run: run) }
                    } catch {
                        writer.forgetAll()
                    }
                }
            }
        } catch {
            writer.forgetAll()
        }
    }
}
