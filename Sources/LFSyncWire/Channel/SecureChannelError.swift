import LFSyncCrypto
import LFSyncTransport

/// Why a secure channel failed. Every case ends the channel: Noise gives no
/// way to resynchronise after a bad message.
package enum SecureChannelError: Error, Sendable, CustomStringConvertible {
    case transport(TransportError)
    case handshake(NoiseError)
    case frame(FrameError)
    /// A message from the peer that does not decode.
    case wire(WireError)
    /// A message of ours that could not be encoded (a limit we broke: our bug,
    /// never the peer's). Nothing was sent; the channel is still usable.
    case unencodable(WireError)
    /// The peer proved a key other than the one we were told to expect (pinned or advertised).
    case peerMismatch(expected: DeviceID, actual: DeviceID)
    case handshakeTimedOut
    /// The peer's opening (its cipher offer or choice) is not one this version understands.
    case incompatiblePeer(String)
    /// The peer closed the connection in the middle of a message or the handshake.
    case truncated
    /// A frame began and then stopped coming, or came slower than
    /// `WireProtocol.minimumFrameRate`: what a peer holding a connection open
    /// with a byte now and then looks like.
    case stalled(bytes: Int, waited: Duration)
    /// A shared segment that breaks the rules (PROTOCOL.md, "Shared segments"):
    /// one we never said we accept, a header of the wrong size, a length over
    /// the frame limit, or bytes that fail their tag.
    case badSegment(String)
    case closed

    package var description: String {
        switch self {
        case let .transport(error): "connection: \(error)"
        case let .handshake(error): "handshake failed: \(error)"
        case let .frame(error): "bad framing from peer: \(error)"
        case let .wire(error): "bad message from peer: \(error)"
        case let .unencodable(error): "lfsync could not send a message (a bug, not the peer's fault): \(error)"
        case let .peerMismatch(expected, actual):
            "the device at this address is \(actual), not the expected \(expected): connection dropped"
        case .handshakeTimedOut: "the peer did not complete the secure handshake in time"
        case let .incompatiblePeer(detail): "the peer speaks another lfsync protocol: \(detail)"
        case .truncated: "the peer closed the connection mid-message"
        case let .stalled(bytes, waited):
            "the peer stalled mid-message: \(bytes) bytes in \(waited.components.seconds) s of waiting"
        case let .badSegment(detail): "bad shared segment from peer: \(detail)"
        case .closed: "the channel is closed"
        }
    }
}

extension SecureChannelError {
    /// What to tell a peer whose frame or message broke the protocol, before
    /// hanging up (the stream can't be trusted past it, but our sending half
    /// still works); nil when there is nothing useful to say (decryption, the
    /// socket).
    package var errorReply: WireMessage.ErrorMessage? {
        switch self {
        case let .wire(wireError):
            WireMessage.ErrorMessage(for: wireError)
        case let .frame(frameError):
            WireMessage.ErrorMessage(code: .limitExceeded, message: WireText.fitted(frameError.description, maxBytes: WireMessage.ErrorMessage.maxMessageBytes))
        default:
            nil
        }
    }
}
