/// Why one asset did not reach one peer: what an app branches on (offer it
/// again later, ask the other person, fix the file), with the words for a
/// person in `description`. The ledger keeps that description as the reason.
public enum AssetFailure: Sendable, Hashable, CustomStringConvertible {
    /// The peer, or the person there, said no.
    case declined(reason: String)
    /// The peer did not answer in time (the offer, or the Receipts of what was sent).
    case timedOut(reason: String)
    /// The peer could not take it: not enough room, a name it refuses, a disk error while planning.
    case refused(reason: String)
    /// The peer was not connected when the push started, and why (the last attempt's error).
    case notConnected(reason: String)
    /// The connection ended before the peer confirmed it.
    case connectionLost(reason: String)
    /// The file changed, or could not be read, while it was being sent.
    case sourceChanged(reason: String)
    /// Anything else, such as a failed Receipt (the bytes did not match, the peer's disk filled).
    case failed(reason: String)
    /// The sender cancelled the transfer before the peer confirmed it. The ledger keeps it
    /// `pending`: nothing went wrong with it, and the next send offers it again.
    case cancelled

    public var description: String {
        switch self {
        case let .declined(reason), let .timedOut(reason), let .refused(reason), let .connectionLost(reason),
             let .sourceChanged(reason), let .failed(reason), let .notConnected(reason):
            reason
        case .cancelled:
            "cancelled by the sender"
        }
    }
}
