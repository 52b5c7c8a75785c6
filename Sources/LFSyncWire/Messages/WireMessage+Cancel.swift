import LFSyncSystem

extension WireMessage {
    /// Either side abandons an offer: the sender stops sending its chunks, the
    /// receiver stops expecting them (verified chunks stay in staging for a
    /// later resume).
    package struct Cancel: WireMessagePayload {
        package static let maxReasonBytes = 256
        static let messageType = WireMessageType.cancel

        package var offerID: UInt64
        package var reason: String

        package init(offerID: UInt64, reason: String) {
            self.offerID = offerID
            self.reason = reason
        }

        func encode(into writer: inout ByteWriter) throws(WireError) {
            try Self.checking { () throws(ByteReaderError) in
                try WireText.validate(reason, limit: Self.maxReasonBytes, field: "reason")
            }
            writer.write(offerID)
            writer.writeWireText(reason)
        }

        init(from reader: inout ByteReader) throws(WireError) {
            (offerID, reason) = try Self.decoding { () throws(ByteReaderError) in
                (try reader.readUInt64(), try reader.readWireText(limit: Self.maxReasonBytes, field: "reason"))
            }
        }
    }
}
