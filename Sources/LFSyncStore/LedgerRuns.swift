import LFSyncSystem

/// This process's run in one ledger (see `LedgerRun`), and which runs are still alive.
///
/// The run is registered in a transaction of its own before the first row it marks in
/// flight, so no rolled-back change can leave a row naming a run the ledger never heard
/// of. Runs that ended and that no row refers to any more are forgotten then.
final class LedgerRuns: Sendable {
    private let registered = LockedState<Int64?>(nil)

    /// This process's run ID, registered now if it was not; nil if `/proc` cannot say who
    /// this process is (its rows in flight then read as interrupted once it is gone anyway).
    func id(registeringIn database: SerializedDatabase) -> Int64? {
        if let id = registered.withLock({ $0 }) { return id }
        guard let me = LedgerRun.current else { return nil }
        let id = try? database.write { db throws(SQLiteError) -> Int64? in
            for (id, run) in try Self.all(in: db) where !run.isAlive {
                try db.cachedStatement("DELETE FROM ledger_run WHERE id = ?1 AND NOT EXISTS (SELECT 1 FROM sync_state WHERE run = ?1)")
                    .execute([.integer(id)])
            }
            return try db.cachedStatement("INSERT INTO ledger_run (pid, boot, started) VALUES (?, ?, ?) RETURNING id")
                .firstRow([.integer(Int64(me.pid)), .text(me.boot), .integer(me.started)]) { $0.int64(at: 0) }
        }
        guard let id = id ?? nil else { return nil }
        return registered.withLock { known in
            if known == nil { known = id }
            return known
        }
    }

    /// The runs whose process still runs, this one's included.
    static func live(in db: SQLiteDatabase) throws(SQLiteError) -> Set<Int64> {
        Set(try all(in: db).filter { $0.run.isAlive }.map(\.id))
    }

    private static func all(in db: SQLiteDatabase) throws(SQLiteError) -> [(id: Int64, run: LedgerRun)] {
        try db.cachedStatement("SELECT id, pid, boot, started FROM ledger_run").rows { row in
            (row.int64(at: 0), LedgerRun(pid: Int32(truncatingIfNeeded: row.int64(at: 1)), boot: row.text(at: 2) ?? "", started: row.int64(at: 3)))
        }
    }
}
