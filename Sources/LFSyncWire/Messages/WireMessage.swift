import LFSyncSystem

/// Every message of the lfsync protocol, and the codec between messages and
/// frames (PROTOCOL.md, "Messages").
///
/// The frame type byte names the message; the payload layout is fixed by the
/// protocol version agreed in Hello, so messages carry no version of their own.
/// Decoding is strict: every count and length is bounded before anything is
/// allocated, booleans and enums accept only their defined values, and the
/// payload must be consumed exactly.
package enum WireMessage: Hashable, Sendable {
    case hello(Hello)
    case connectionDecision(ConnectionDecision)
    case offer(Offer)
    case offerReply(OfferReply)
    case chunk(Chunk)
    case receipt(Receipt)
    case cancel(Cancel)
    case pull(Pull)
    case holdingCheck(HoldingCheck)
    case holdingReport(HoldingReport)
    case fetch(Fetch)
    case chunkRequest(ChunkRequest)
    case chunkReply(ChunkReply)
    case pathStateRequest(PathStateRequest)
    case pathStateReport(PathStateReport)
    case syncRequest(SyncRequest)
    case syncReply(SyncReply)
    case ping(Ping)
    case pong(Pong)
    case error(ErrorMessage)

    package var type: WireMessageType {
        switch self {
        case .hello: .hello
        case .connectionDecision: .connectionDecision
        case .offer: .offer
        case .offerReply: .offerReply
        case .chunk: .chunk
        case .receipt: .receipt
        case .cancel: .cancel
        case .pull: .pull
        case .holdingCheck: .holdingCheck
        case .holdingReport: .holdingReport
        case .fetch: .fetch
        case .chunkRequest: .chunkRequest
        case .chunkReply: .chunkReply
        case .pathStateRequest: .pathStateRequest
        case .pathStateReport: .pathStateReport
        case .syncRequest: .syncRequest
        case .syncReply: .syncReply
        case .ping: .ping
        case .pong: .pong
        case .error: .error
        }
    }

    private var payloadValue: any WireMessagePayload {
        switch self {
        case let .hello(message): message
        case let .connectionDecision(message): message
        case let .offer(message): message
        case let .offerReply(message): message
        case let .chunk(message): message
        case let .receipt(message): message
        case let .cancel(message): message
        case let .pull(message): message
        case let .holdingCheck(message): message
        case let .holdingReport(message): message
        case let .fetch(message): message
        case let .chunkRequest(message): message
        case let .chunkReply(message): message
        case let .pathStateRequest(message): message
        case let .pathStateReport(message): message
        case let .syncRequest(message): message
        case let .syncReply(message): message
        case let .ping(message): message
        case let .pong(message): message
        case let .error(message): message
        }
    }

    /// Encodes the message as one frame; fails if a field breaks a limit or
    /// the payload would exceed `WireProtocol.maxPayloadLength`.
    package func frame() throws(WireError) -> Frame {
        // Chunk frames are large: size the buffer once instead of regrowing it.
        let capacity = if case let .chunk(chunk) = self { chunk.payload.encodedLength + 64 } else { 256 }
        var writer = ByteWriter(capacity: capacity)
        try payloadValue.encode(into: &writer)
        guard writer.bytes.count <= WireProtocol.maxPayloadLength else {
            throw .unencodable(type, "payload of \(writer.bytes.count) bytes exceeds the limit of \(WireProtocol.maxPayloadLength)")
        }
        return Frame(type: type.rawValue, payload: writer.bytes)
    }

    /// Decodes a frame produced by `FrameDecoder`.
    package init(frame: Frame) throws(WireError) {
        guard let type = WireMessageType(rawValue: frame.type) else { throw .unknownMessageType(frame.type) }
        var reader = ByteReader(frame.payload)
        switch type {
        case .hello: self = .hello(try Hello(from: &reader))
        case .connectionDecision: self = .connectionDecision(try ConnectionDecision(from: &reader))
        case .offer: self = .offer(try Offer(from: &reader))
        case .offerReply: self = .offerReply(try OfferReply(from: &reader))
        case .chunk: self = .chunk(try Chunk(from: &reader))
        case .receipt: self = .receipt(try Receipt(from: &reader))
        case .cancel: self = .cancel(try Cancel(from: &reader))
        case .pull: self = .pull(try Pull(from: &reader))
        case .holdingCheck: self = .holdingCheck(try HoldingCheck(from: &reader))
        case .holdingReport: self = .holdingReport(try HoldingReport(from: &reader))
        case .fetch: self = .fetch(try Fetch(from: &reader))
        case .chunkRequest: self = .chunkRequest(try ChunkRequest(from: &reader))
        case .chunkReply: self = .chunkReply(try ChunkReply(from: &reader))
        case .pathStateRequest: self = .pathStateRequest(try PathStateRequest(from: &reader))
        case .pathStateReport: self = .pathStateReport(try PathStateReport(from: &reader))
        case .syncRequest: self = .syncRequest(try SyncRequest(from: &reader))
        case .syncReply: self = .syncReply(try SyncReply(from: &reader))
        case .ping: self = .ping(try Ping(from: &reader))
        case .pong: self = .pong(try Pong(from: &reader))
        case .error: self = .error(try ErrorMessage(from: &reader))
        }
        guard reader.isAtEnd else { throw .malformed(type, .trailingBytes(reader.remaining)) }
    }
}
