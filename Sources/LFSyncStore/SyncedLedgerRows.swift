import LFSyncContent
import LFSyncCrypto
import LFSyncSystem

/// The ledger rows of each peer that say `synced` with no reason and a known
/// size, as this connection last saw them: what lets `LedgerChange` skip the
/// writes that would leave a row as it is without asking SQLite row by row.
///
/// A repeat push of an unchanged library confirms every content twice on the
/// sender (in flight, then synced) and once on the receiver; each confirmation
/// was an upsert that found the row already right and changed nothing, and
/// those lookups were a tenth of the sender's CPU for 20,000 files. A point
/// lookup answers the first, and this memory the second.
///
/// Only a subset of the truth is kept, and only what this connection wrote or
/// read itself: another connection's commit (another `lfsync` process on the
/// same state directory) changes `PRAGMA data_version`, and then everything
/// is forgotten and read again. A write that fails forgets everything too.
/// It holds only rows this connection confirmed or looked up, so at most the
/// ledger's synced rows (a few tens of bytes each).
struct SyncedLedgerRows {
    private var dataVersion: String?
    private var byPeer: [PeerKey: [ContentID: UInt64]] = [:]

    /// Forgets what another connection may have changed since the last look.
    /// Call inside the transaction that writes.
    mutating func refresh(_ db: SQLiteDatabase) throws(SQLiteError) {
        let version = try db.pragma("data_version")
        if version != dataVersion || version == nil {
            byPeer = [:]
            dataVersion = version
        }
    }

    /// Looks up, one row at a time, those of `contents` this connection does
    /// not yet know to be synced: a point lookup each, cheaper than the upsert
    /// it saves, and only for the contents at hand. (Reading a peer's whole ledger once
    /// was cheaper still for a push of the whole library, but cost a push of one
    /// folder as much as the 200,000 rows a household's NAS can have.)
    mutating func learn(_ contents: [ContentID], of peer: PeerKey, from db: SQLiteDatabase) throws(SQLiteError) {
        let lookup = try db.cachedStatement("""
            SELECT bytes FROM sync_state
            WHERE peer = ? AND content_id = ? AND state = 'synced' AND reason IS NULL AND bytes IS NOT NULL
            """)
        try lookup.bind(peer.rawValue, at: 1)
        var known = byPeer.removeValue(forKey: peer) ?? [:]
        defer { byPeer[peer] = known }
        for content in contents where known[content] == nil {
            try lookup.bind(content.hash, at: 2)
            defer { lookup.reset() }
            if let row = try lookup.step() { known[content] = UInt64(bitPattern: row.int64(at: 0)) }
        }
    }

    /// Whether the row of `content` is known to say synced (with `bytes`, when given).
    func isSynced(_ content: ContentID, with peer: PeerKey, bytes: UInt64? = nil) -> Bool {
        guard let known = byPeer[peer]?[content] else { return false }
        return bytes.map { $0 == known } ?? true
    }

    /// The row now says synced, with no reason and `bytes`.
    mutating func markSynced(_ content: ContentID, with peer: PeerKey, bytes: UInt64) {
        byPeer[peer, default: [:]][content] = bytes
    }

    /// The row may now say anything else.
    mutating func forget(_ content: ContentID, with peer: PeerKey) {
        byPeer.mutateValue(forKey: peer) { $0[content] = nil }
    }

    mutating func forgetAll() {
        byPeer = [:]
        dataVersion = nil
    }
}
