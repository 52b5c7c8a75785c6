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
    /// still works): every violation gets exactly one code (PROTOCOL.md, "Error");
    /// nil when the connection itself failed and there is no one to tell.
    package var errorReply: WireMessage.ErrorMessage? {
        func reply(_ code: WireMessage.ErrorMessage.Code, _ text: String) -> WireMessage.ErrorMessage {
            WireMessage.ErrorMessage(code: code, message: WireText.fitted(text, maxBytes: WireMessage.ErrorMessage.maxMessageBytes))
        }
        switch self {
        case let .wire(wireError):
            return WireMessage.ErrorMessage(for: wireError)
        case let .frame(.frameTooLarge(length, limit)):
            return reply(.limitExceeded, FrameError.frameTooLarge(length: length, limit: limit).description)
        case let .stalled(bytes, waited):
            return reply(.limitExceeded, "a frame came slower than the minimum rate: \(bytes) bytes in \(waited.components.seconds) s")
        case let .handshake(noise):
            // After the handshake: a transport message that fails authentication (tampered,
            // or out of order). Our sending half still works.
            return reply(.malformedMessage, "a Noise transport message failed: \(noise)")
        case let .badSegment(detail):
            return reply(.malformedMessage, "bad shared segment: \(detail)")
        case .transport, .truncated, .closed, .frame(.truncatedStream), .unencodable, .peerMismatch, .handshakeTimedOut, .incompatiblePeer:
            // The connection itself failed (the peer closed it, even mid-message; the socket),
            // or this side did: there is no one to tell, or nothing the peer did.
            return nil
        }
    }
}
