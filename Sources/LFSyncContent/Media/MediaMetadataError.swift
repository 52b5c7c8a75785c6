/// Why a media file's metadata could not be read.
///
/// Callers that only want "is there an identifier" use the non-throwing file API,
/// which maps every one of these to `nil`; the typed cases exist so tests (and
/// fuzzing) can tell a lying file from an absent field.
package enum MediaMetadataError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A structure claims bytes beyond the end of its container or the file.
    case truncated(String)
    /// A field holds a value the format does not allow.
    case malformed(String)
    /// A size or count is larger than we are willing to read or allocate.
    case overLimit(String)
    /// A valid feature this reader deliberately does not implement.
    case unsupported(String)
    /// The file could not be opened or read.
    case io(String)

    public var description: String {
        switch self {
        case let .truncated(what): "truncated: \(what)"
        case let .malformed(what): "malformed: \(what)"
        case let .overLimit(what): "over limit: \(what)"
        case let .unsupported(what): "unsupported: \(what)"
        case let .io(what): "I/O error: \(what)"
        }
    }
}
