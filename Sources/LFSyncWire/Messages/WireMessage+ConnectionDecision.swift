import LFSyncSystem

extension WireMessage {
    /// The receiving side's answer to a connection (after its user, or its
    /// trust list, decided). Nothing but Hello, ConnectionDecision, Error and
    /// Ping/Pong may flow before an accepting decision.
    package struct ConnectionDecision: WireMessagePayload {
        package static let maxReasonBytes = 256
        static let messageType = WireMessageType.connectionDecision

        package var accepted: Bool
        /// Why it was declined (or a note with an acceptance), for the other user.
        package var reason: String?

        package init(accepted: Bool, reason: String? = nil) {
            self.accepted = accepted
            self.reason = reason
        }

        func encode(into writer: inout ByteWriter) throws(WireError) {
            try Self.checking { () throws(ByteReaderError) in
                if let reason { try WireText.validate(reason, limit: Self.maxReasonBytes, field: "reason") }
            }
            writer.writeWireBool(accepted)
            writer.writeOptionalWireText(reason)
        }

        init(from reader: inout ByteReader) throws(WireError) {
            (accepted, reason) = try Self.decoding { () throws(ByteReaderError) in
                (try reader.readWireBool(field: "accepted"),
                 try reader.readOptionalWireText(limit: Self.maxReasonBytes, field: "reason"))
            }
        }
    }
}
