/// A device asking to connect. Nothing is exchanged beyond the handshake
/// and Hello until someone says yes; no answer in time means no.
public struct ConnectionRequest: Sendable {
    /// Who is asking, as proven by the handshake.
    public let peer: Peer
    let decision: OneShotDecision

    /// False once answered or timed out: a stream may still hold requests that expired unread.
    public var isPending: Bool { decision.answer == nil }

    /// Lets the device in.
    /// - Throws: `.expired` when its time to be answered ran out first (it was told no),
    ///   `.declined` when it was declined.
    public func accept() async throws(ConnectionRequestError) {
        guard decision.decide(true) || decision.answer == true else {
            throw decision.hasExpired ? .expired : .declined
        }
    }

    public func decline() { decision.decide(false) }
}

/// Why a connection request cannot be accepted any more.
public enum ConnectionRequestError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Nobody answered in time: the device was told no.
    case expired
    /// It was declined.
    case declined

    public var description: String {
        switch self {
        case .expired: "the request expired unanswered and was declined"
        case .declined: "the request was declined"
        }
    }
}
