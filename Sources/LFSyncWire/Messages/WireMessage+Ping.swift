import LFSyncSystem

extension WireMessage {
    /// A liveness probe; the peer answers with a Pong carrying the same nonce.
    package struct Ping: WireMessagePayload {
        static let messageType = WireMessageType.ping
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
