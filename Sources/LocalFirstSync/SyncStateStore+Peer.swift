import LFSyncContent
import LFSyncCrypto
import LFSyncStore

/// The ledger asked in the engine's terms: by a peer's `syncIdentity`, the Device ID its
/// handshake proved, as an app holding a `Peer` has it (`contentIDs(notSyncedWith:from:)`
/// and the other reads are in `SyncStateStore+Reading`).
extension SyncStateStore {
    /// Which of `assets` this peer has not confirmed yet, in their order.
    public func assets(notSyncedWith peer: DeviceID, from assets: [Asset]) async throws(SQLiteError) -> [Asset] {
        let missing = Set(try await contentIDs(notSyncedWith: peer, from: assets.map(\.contentID)))
        return assets.filter { missing.contains($0.contentID) }
    }
}
