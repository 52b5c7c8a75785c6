/// The frame type byte of each message (PROTOCOL.md, "Messages"). Values are
/// part of the protocol: never renumber, only add.
package enum WireMessageType: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    case hello = 0x01
    case connectionDecision = 0x02
    case error = 0x03
    case ping = 0x04
    case pong = 0x05
    case offer = 0x10
    case offerReply = 0x11
    case chunk = 0x12
    case receipt = 0x13
    case cancel = 0x14
    case pull = 0x15
    case holdingCheck = 0x16
    case holdingReport = 0x17
    case fetch = 0x18
    case chunkRequest = 0x19
    case chunkReply = 0x1A
    case pathStateRequest = 0x1B
    case pathStateReport = 0x1C
    case syncRequest = 0x1D
    case syncReply = 0x1E

    package var description: String {
        switch self {
        case .hello: "Hello"
        case .connectionDecision: "ConnectionDecision"
        case .error: "Error"
        case .ping: "Ping"
        case .pong: "Pong"
        case .offer: "Offer"
        case .offerReply: "OfferReply"
        case .chunk: "Chunk"
        case .receipt: "Receipt"
        case .cancel: "Cancel"
        case .pull: "Pull"
        case .holdingCheck: "HoldingCheck"
        case .holdingReport: "HoldingReport"
        case .fetch: "Fetch"
        case .chunkRequest: "ChunkRequest"
        case .chunkReply: "ChunkReply"
        case .pathStateRequest: "PathStateRequest"
        case .pathStateReport: "PathStateReport"
        case .syncRequest: "SyncRequest"
        case .syncReply: "SyncReply"
        }
    }
}
