import LFSyncContent

/// Progress of one transfer towards (or from) ONE peer. lfsync never blends
/// peers into an average: a broadcast yields one of these per peer.
public struct TransferProgress: Sendable, Hashable {
    /// Chunk bytes delivered (or copied locally, on the receiving side).
    public var bytesDone: UInt64
    /// Chunk bytes that need to move; known once the peer has answered the offer.
    public var bytesTotal: UInt64
    public var assetsDone: Int
    public var assetsTotal: Int

    public init(bytesDone: UInt64 = 0, bytesTotal: UInt64 = 0, assetsDone: Int = 0, assetsTotal: Int = 0) {
        self.bytesDone = bytesDone
        self.bytesTotal = bytesTotal
        self.assetsDone = assetsDone
        self.assetsTotal = assetsTotal
    }

    public var fractionCompleted: Double {
        if bytesTotal > 0 { return min(1, Double(bytesDone) / Double(bytesTotal)) }
        return assetsTotal == 0 ? 1 : Double(assetsDone) / Double(assetsTotal)
    }
}

/// Where one peer's side of a transfer stands.
public enum TransferState: Sendable, Hashable {
    case offering
    case transferring
    case completed
    case declined(reason: String)
    case failed(reason: String)
    /// `OutgoingTransfer.cancel()` (or cancelling the task awaiting it) stopped it;
    /// what was not confirmed stays `pending` in the ledger, to be sent another time.
    case cancelled

    public var isFinal: Bool {
        switch self {
        case .completed, .declined, .failed, .cancelled: true
        case .offering, .transferring: false
        }
    }
}

/// One event of an outgoing transfer: always about exactly one peer.
public struct TransferUpdate: Sendable, Hashable {
    public var peer: Peer
    public var progress: TransferProgress
    public var state: TransferState
}

/// How a transfer ended for one peer.
public struct PeerTransferSummary: Sendable, Hashable {
    public var peer: Peer
    public var state: TransferState
    public var assetsStored: Int
    public var assetsFailed: Int
    /// Chunk payload bytes put on the wire (after compression) for this peer.
    public var chunkBytesSent: UInt64
    /// Why each asset that did not reach this peer failed.
    public var failures: [ContentID: AssetFailure]
}
