extension WireMessage {
    /// The answer to a Ping, echoing its nonce.
    public struct Pong: WireMessagePayload {
        static let messageType = WireMessageType.pong
        public var nonce: UInt64

        public init(nonce: UInt64) {
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
