import Foundation
import LFSyncContent

/// One write to the ledger (`SyncStateStore`), as a value: what `record` and
/// `recordSynced` do at once, and what `SyncStateStore.enqueue` queues so that
/// the changes of a busy moment share one commit.
package enum LedgerChange: Sendable {
    /// Which existing rows a `record` leaves as they are.
    package enum Keep: Sendable, Equatable {
        case nothing
        /// Rows that say `synced` (see `SyncStateStore.record`'s `unlessSynced`).
        case synced
        /// Rows that say `synced` and became so before this moment: what a push that
        /// turns its own `synced` rows back to `inFlight` (a content offered again) must
        /// not touch — the peer verified those before the push began. A row's time is
        /// when it became `synced` (a repeat confirmation leaves it, see `upsertSynced`).
        case syncedBefore(Date)
    }

    /// `state` for every content, towards one peer (see `SyncStateStore.record`).
    case record(
        SyncState, contents: [ContentID], peer: PeerKey,
        reason: String? = nil, bytes: UInt64? = nil, keep: Keep = .nothing, at: Date = Date())
    /// `synced` for every content, each with its own size (see `SyncStateStore.recordSynced`).
    case synced([(content: ContentID, bytes: UInt64)], peer: PeerKey, at: Date = Date())

    /// Whether the change marks rows in flight (they then carry the writing run: `LedgerRun`).
    var marksInFlight: Bool {
        if case .record(.inFlight, _, _, _, _, _, _) = self { true } else { false }
    }

    /// Writes the rows that would change; the caller holds the transaction.
    /// `known` says which rows already say what a change would write, and
    /// learns what this change wrote (see `SyncedLedgerRows`). A row written
    /// in flight names `run`; every other row names none.
    func apply(to db: SQLiteDatabase, known: inout SyncedLedgerRows, run: Int64? = nil) throws(SQLiteError) {
        switch self {
        case let .record(state, contents, peer, reason, bytes, keep, date):
            var written = contents
            if keep == .synced {
                try known.learn(contents, of: peer, from: db)
                written = contents.filter { !known.isSynced($0, with: peer) }
            }
            guard !written.isEmpty else { return }
            let upsert: SQLiteStatement
            switch keep {
            case .nothing: upsert = try db.cachedStatement(Self.upsert)
            case .synced: upsert = try db.cachedStatement(Self.upsertUnlessSynced)
            case let .syncedBefore(moment):
                upsert = try db.cachedStatement(Self.upsertUnlessSyncedBefore)
                try upsert.bind(SyncStateStore.milliseconds(moment), at: 7)
            }
            try upsert.bind(peer.rawValue, at: 1)
            try upsert.bind(state.rawValue, at: 3)
            try upsert.bind(SQLiteValue.optional(reason.map { String($0.prefix(SyncStateStore.maxReasonLength)) }), at: 4)
            try upsert.bind(bytes.map { .integer(unsigned: $0) } ?? .null, at: 5)
            try upsert.bind(SyncStateStore.milliseconds(date), at: 6)
            try upsert.bind(state == .inFlight ? run.map { .integer($0) } ?? .null : .null, at: 8)
            for content in written {
                try upsert.bind(content.hash, at: 2)
                try upsert.run()
                known.forget(content, with: peer)
            }
        case let .synced(entries, peer, date):
            guard !entries.isEmpty else { return }
            let upsert = try db.cachedStatement(Self.upsertSynced)
            try upsert.bind(peer.rawValue, at: 1)
            try upsert.bind(SyncState.synced.rawValue, at: 3)
            try upsert.bind(SyncStateStore.milliseconds(date), at: 5)
            for entry in entries where !known.isSynced(entry.content, with: peer, bytes: entry.bytes) {
                try upsert.bind(entry.content.hash, at: 2)
                try upsert.bind(.integer(unsigned: entry.bytes), at: 4)
                try upsert.run()
                known.markSynced(entry.content, with: peer, bytes: entry.bytes)
            }
        }
    }

    private static let upsert = """
        INSERT INTO sync_state (peer, content_id, state, reason, bytes, updated_at_ms, run)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?8)
        ON CONFLICT (peer, content_id) DO UPDATE SET
            state = excluded.state, reason = excluded.reason,
            bytes = coalesce(excluded.bytes, sync_state.bytes),
            updated_at_ms = excluded.updated_at_ms, run = excluded.run
        """
    private static let upsertUnlessSynced = upsert + " WHERE sync_state.state <> 'synced'"
    private static let upsertUnlessSyncedBefore = upsert + " WHERE sync_state.state <> 'synced' OR sync_state.updated_at_ms >= ?7"

    /// A row that already says `synced` with the same size is left as it is, so
    /// its time stays the time it became synced. A repeat push of an unchanged
    /// library confirms every content again on both sides; rewriting each row
    /// would dirty every page of the ledger and make each commit wait for an
    /// fsync, with nothing to record.
    private static let upsertSynced = """
        INSERT INTO sync_state (peer, content_id, state, reason, bytes, updated_at_ms, run)
        VALUES (?, ?, ?, NULL, ?, ?, NULL)
        ON CONFLICT (peer, content_id) DO UPDATE SET
            state = excluded.state, reason = NULL, bytes = excluded.bytes,
            updated_at_ms = excluded.updated_at_ms, run = NULL
        WHERE sync_state.state <> excluded.state OR sync_state.reason IS NOT NULL
            OR sync_state.bytes IS NOT excluded.bytes
        """
}
