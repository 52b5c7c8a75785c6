import LFSyncContent
import LFSyncCrypto
import LFSyncStore

/// What `LibraryImporter` found out about an offer before anything is asked
/// of the peer.
package struct ImportPlan {
    /// Per asset: `inPlace[placement][file]`.
    package var inPlace: [ContentID: [[Bool]]] = [:]
    /// Contents the offer brings in that were not already on their way: the
    /// chunks still missing after whatever was found locally (empty: complete
    /// already).
    package var missing: [Hash256: ChunkBitmap] = [:]
    /// Assets left out because the disk has no room for them, and why: the
    /// rest of the offer fits and is taken. Nothing above is kept for them.
    package var refused: [ContentID: ReceiveError] = [:]

    package init() {}
}
