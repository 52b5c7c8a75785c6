import LFSyncSystem

extension WireMessage {
    /// Tells the peer why we are about to close (or why we refuse a request),
    /// in words its user can read. The sender closes the connection after a
    /// fatal error; the code lets software react without parsing text.
    package struct ErrorMessage: WireMessagePayload {
        package static let maxMessageBytes = 1024
        static let messageType = WireMessageType.error

        /// Error codes; unknown codes from newer peers are kept as they are.
        package struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
            package let rawValue: UInt16
            package init(rawValue: UInt16) { self.rawValue = rawValue }

            /// The peer's Hello announced a protocol version we do not speak.
            package static let unsupportedProtocolVersion = Code(rawValue: 1)
            /// A frame or message could not be decoded.
            package static let malformedMessage = Code(rawValue: 2)
            /// A valid message at the wrong time (e.g. an Offer before the connection was accepted).
            package static let unexpectedMessage = Code(rawValue: 3)
            /// Chunk data for an offer that was not accepted; the connection is closed.
            package static let notAccepted = Code(rawValue: 4)
            /// A request exceeds a limit (offer larger than free space, too many assets).
            package static let limitExceeded = Code(rawValue: 5)
            /// Something failed on the sending side that is not the peer's fault.
            package static let internalError = Code(rawValue: 6)

            package var description: String {
                switch self {
                case .unsupportedProtocolVersion: "unsupported protocol version"
                case .malformedMessage: "malformed message"
                case .unexpectedMessage: "unexpected message"
                case .notAccepted: "not accepted"
                case .limitExceeded: "limit exceeded"
                case .internalError: "internal error"
                default: "error \(rawValue)"
                }
            }
        }

        package var code: Code
        package var message: String

        package init(code: Code, message: String) {
            self.code = code
            self.message = message
        }

        /// The Error to send when a peer's message fails to decode; the text is
        /// made to fit (`WireText.fitted`), so this always encodes.
        package init(for error: WireError) {
            switch error {
            case let .unsupportedProtocolVersion(version):
                code = .unsupportedProtocolVersion
                message = WireText.fitted(
                    "protocol version \(version) is not supported; this peer (lfsync \(LFSyncVersion.current)) speaks version "
                        + "\(WireProtocol.version); please update the older side", maxBytes: Self.maxMessageBytes)
            case .unknownMessageType, .malformed, .decompressionFailed, .decompressedTooLarge, .decompressedSizeMismatch:
                code = .malformedMessage
                message = WireText.fitted(error.description, maxBytes: Self.maxMessageBytes)
            case .unencodable:
                code = .internalError
                message = WireText.fitted(error.description, maxBytes: Self.maxMessageBytes)
            }
        }

        func encode(into writer: inout ByteWriter) throws(WireError) {
            try Self.checking { () throws(ByteReaderError) in
                try WireText.validate(message, limit: Self.maxMessageBytes, field: "message")
            }
            writer.write(code.rawValue)
            writer.writeWireText(message)
        }

        init(from reader: inout ByteReader) throws(WireError) {
            (code, message) = try Self.decoding { () throws(ByteReaderError) in
                (Code(rawValue: try reader.readUInt16()),
                 try reader.readWireText(limit: Self.maxMessageBytes, field: "message"))
            }
        }
    }
}
