/// A device asking to connect. Nothing is exchanged beyond the handshake
/// and Hello until someone says yes; no answer in time means no.
public struct ConnectionRequest: Sendable {
    /// Who is asking, as proven by the handshake.
    public let peer: Peer
    let decision: OneShotDecision

    /// False once answered or timed out: a stream may still hold requests that expired unread.
    public var isPending: Bool { decision.answer == nil }

    public func accept() { decision.decide(true) }
    public func decline() { decision.decide(false) }
}
