/// Protocol-wide constants of the lfsync wire format (PROTOCOL.md, "Messages").
package enum WireProtocol {
    /// The protocol version this build speaks, sent in Hello. It changes only
    /// for incompatible changes; additions that old peers can ignore travel
    /// as capability bits or new message types instead.
    package static let version: UInt16 = 3

    /// Versions whose Hello (and everything after it) this build can decode.
    package static let supportedVersions: ClosedRange<UInt16> = 3...3

    /// No message payload may exceed this; it equals the default frame limit,
    /// so anything we encode passes a default `FrameDecoder`.
    package static let maxPayloadLength = FrameDecoder.defaultMaxFrameLength

    // MARK: - Deadlines and limits every implementation respects (PROTOCOL.md, "Limits and deadlines")

    /// From the TCP accept, the handshake and the initiator's Hello must be
    /// complete within this; a connection that is slower is closed. Before
    /// consent a stranger gets seconds, not minutes.
    package static let setUpTimeout: Duration = .seconds(10)

    /// Largest frame either side accepts before the connection decision:
    /// Hello, ConnectionDecision and Error are all far smaller. A stranger
    /// cannot make a receiver allocate a chunk-sized buffer.
    package static let setUpFrameLimit = 4096

    /// How long the responder may take to answer a ConnectionDecision or a
    /// push's first OfferReply (a person deciding); no answer by then is "no",
    /// and the responder says so.
    package static let consentTimeout: Duration = .seconds(120)

    /// How long the initiator waits for those answers: the consent timeout
    /// plus time for the answer to travel, so a "no" sent at the last moment
    /// still arrives as a "no" and not as silence.
    package static let consentWait: Duration = .seconds(150)

    /// A connection with nothing to read for this long is pinged; a peer that
    /// sends nothing at all for twice this (not even the Pong) is gone.
    package static let idleInterval: Duration = .seconds(60)

    /// A frame that has begun must keep coming: once `frameGrace` of waiting
    /// for it has passed, its bytes must average at least this many per second
    /// of waiting. A byte every few seconds holds nothing open for long.
    package static let minimumFrameRate = 1024
    package static let frameGrace: Duration = .seconds(30)
}
