import LFSyncSystem

/// Everything that can be wrong with a message, in either direction.
///
/// Incoming errors (`unknownMessageType`, `malformed`, `unsupportedProtocolVersion`,
/// the decompression cases) mean the peer is broken or hostile: answer with an
/// `ErrorMessage` (see `WireMessage.ErrorMessage(for:)`) and close.
/// `unencodable` is a bug or an oversized request on our side.
package enum WireError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A frame type byte no message of this protocol version uses.
    case unknownMessageType(UInt8)
    /// The payload of a known message type did not decode: truncated, over a
    /// limit, an invalid value, or trailing bytes.
    case malformed(WireMessageType, ByteReaderError)
    /// A Hello announcing a protocol version this build cannot speak.
    case unsupportedProtocolVersion(UInt16)
    /// A message we were asked to send breaks a protocol limit.
    case unencodable(WireMessageType, String)
    /// A zstd chunk payload is not valid zstd data.
    case decompressionFailed(String)
    /// A zstd chunk payload decompresses to more than its declared length
    /// (a decompression bomb, or corruption); stopped at the declared length.
    case decompressedTooLarge(declared: Int)
    /// A zstd chunk payload decompresses (or says it does) to another length than declared.
    case decompressedSizeMismatch(declared: Int, actual: Int)

    package var description: String {
        switch self {
        case let .unknownMessageType(type):
            "unknown message type 0x\(String(type, radix: 16))"
        case let .malformed(type, error):
            "malformed \(type) message: \(error)"
        case let .unsupportedProtocolVersion(version):
            "peer speaks lfsync protocol version \(version); this lfsync supports "
                + "\(WireProtocol.supportedVersions.lowerBound)...\(WireProtocol.supportedVersions.upperBound)"
        case let .unencodable(type, reason):
            "cannot encode \(type) message: \(reason)"
        case let .decompressionFailed(reason):
            "chunk decompression failed: \(reason)"
        case let .decompressedTooLarge(declared):
            "chunk decompresses to more than its declared \(declared) bytes"
        case let .decompressedSizeMismatch(declared, actual):
            "chunk decompresses to \(actual) bytes, but \(declared) were declared"
        }
    }
}
