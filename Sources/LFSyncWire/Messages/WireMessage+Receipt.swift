import LFSyncContent
import LFSyncSystem

extension WireMessage {
    /// The receiver's final word on one asset of an offer. `stored` means every
    /// file was hash-verified and durably renamed into place — only then may
    /// the sender mark the (content, peer) record synced.
    package struct Receipt: WireMessagePayload {
        package static let maxReasonBytes = 256
        static let messageType = WireMessageType.receipt

        package enum Outcome: Hashable, Sendable {
            case stored
            case failed(reason: String)
        }

        package var offerID: UInt64
        package var contentID: ContentID
        package var outcome: Outcome

        package init(offerID: UInt64, contentID: ContentID, outcome: Outcome) {
            self.offerID = offerID
            self.contentID = contentID
            self.outcome = outcome
        }

        func encode(into writer: inout ByteWriter) throws(WireError) {
            if case let .failed(reason) = outcome {
                try Self.checking { () throws(ByteReaderError) in
                    try WireText.validate(reason, limit: Self.maxReasonBytes, field: "reason")
                }
            }
            writer.write(offerID)
            writer.write(contentID.hash)
            switch outcome {
            case .stored:
                writer.write(UInt8(0))
            case let .failed(reason):
                writer.write(UInt8(1))
                writer.writeWireText(reason)
            }
        }

        init(from reader: inout ByteReader) throws(WireError) {
            (offerID, contentID, outcome) = try Self.decoding { () throws(ByteReaderError) in
                let offerID = try reader.readUInt64()
                let contentID = ContentID(hash: try reader.readHash())
                let outcome: Outcome = switch try reader.readUInt8() {
                case 0: .stored
                case 1: .failed(reason: try reader.readWireText(limit: Self.maxReasonBytes, field: "reason"))
                case let other: throw ByteReaderError.invalidValue("receipt outcome \(other)")
                }
                return (offerID, contentID, outcome)
            }
        }
    }
}
