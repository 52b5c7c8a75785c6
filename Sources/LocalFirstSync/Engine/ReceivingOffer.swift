/// The receiving side of one offer inside a session: which chunks were
/// asked for, which are still missing, and the staged files being filled.
struct ReceivingOffer {
    enum Phase { case awaitingDecision, receiving }

    struct AssetState {
        var asset: Asset
        /// nil where the file is already in place.
        var files: [IncomingFile?]
        /// Chunks still expected from the peer, per file index.
        var missing: [Int: Set<Int>]
        var remainingCount: Int { missing.values.reduce(0) { $0 + $1.count } }
    }

    let offerID: UInt64
    var phase: Phase
    var assets: [ContentID: AssetState] = [:]
    let handle: ReceiveSessionHandle
    var pendingAssets: Set<ContentID> = []
    /// Pending assets whose every chunk arrived, now with the install queue: a
    /// Cancel no longer concerns them, their receipts still go out.
    var installing: Set<ContentID> = []
}
