import LFSyncContent
import LFSyncCrypto
import LFSyncStore

/// The ledger asked in the engine's terms: by a peer's `syncIdentity`, the
/// Device ID its handshake proved, as an app holding a `Peer` has it.
extension SyncStateStore {
    /// Which of `candidates` this peer has not confirmed yet (not `synced`).
    public func contentIDs(notSyncedWith peer: DeviceID, from candidates: [ContentID]) throws(SQLiteError) -> [ContentID] {
        try contentIDs(notSyncedWith: PeerKey(rawValue: peer.description), from: candidates)
    }

    /// Which of `assets` this peer has not confirmed yet, in their order.
    public func assets(notSyncedWith peer: DeviceID, from assets: [Asset]) throws(SQLiteError) -> [Asset] {
        let missing = Set(try contentIDs(notSyncedWith: peer, from: assets.map(\.contentID)))
        return assets.filter { missing.contains($0.contentID) }
    }
}
