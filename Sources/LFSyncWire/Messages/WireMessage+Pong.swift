import LFSyncSystem

extension WireMessage {
    /// The answer to a Ping, echoing its nonce.
    package struct Pong: WireMessagePayload {
        static let messageType = WireMessageType.pong
        package var nonce: UInt64

        package init(nonce: UInt64) {
            self.nonce = nonce
        }

        func encode(into writer: inout ByteWriter) throws(WireError) {
            writer.write(nonce)
        }

        init(from reader: inout ByteReader) throws(WireError) {
            nonce = try Self.decoding { () throws(ByteReaderError) in try reader.readUInt64() }
        }
    }
}
