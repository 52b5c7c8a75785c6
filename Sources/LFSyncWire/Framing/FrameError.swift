/// Framing failures. Both mean the byte stream can no longer be trusted to be
/// in sync, so the connection must be closed.
package enum FrameError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A header declared a payload over the decoder's limit; detected from the
    /// five header bytes alone, before any payload is buffered.
    case frameTooLarge(length: UInt32, limit: Int)
    /// The stream ended in the middle of a frame.
    case truncatedStream(bufferedBytes: Int)

    package var description: String {
        switch self {
        case let .frameTooLarge(length, limit):
            "frame of \(length) bytes exceeds the limit of \(limit) bytes"
        case let .truncatedStream(buffered):
            "connection closed in the middle of a frame (\(buffered) bytes of it received)"
        }
    }
}
