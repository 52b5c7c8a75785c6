import LFSyncSystem

extension WireMessage {
    /// Asks a peer that trusts us to offer what it has and we lack. The peer
    /// answers with zero or more Offers; it alone decides what to offer, so a
    /// Pull carries no filter, only an ID to correlate the answer in logs.
    package struct Pull: WireMessagePayload {
        static let messageType = WireMessageType.pull
        package var requestID: UInt64

        package init(requestID: UInt64) {
            self.requestID = requestID
        }

        func encode(into writer: inout ByteWriter) throws(WireError) {
            writer.write(requestID)
        }

        init(from reader: inout ByteReader) throws(WireError) {
            requestID = try Self.decoding { () throws(ByteReaderError) in try reader.readUInt64() }
        }
    }
}
