import LFSyncContent
import LFSyncStore

/// The Live Photo identifier inside a received file's bytes, when they
/// passed through memory whole (a file of one chunk — most files of a photo
/// library by count): read there, the file need not be opened again when it
/// is entered in the index. Content only: whether a placement's name makes
/// it count (a still or a video) is decided per path.
package enum EmbeddedIdentifier: Sendable, Equatable {
    /// Not seen whole: read from the installed file.
    case unknown
    /// Read from the bytes; nil when they hold none.
    case known(String?)

    /// The identifier a file at `path` with these bytes has.
    package func forFile(atPath path: String, readingIfUnknown absolutePath: @autoclosure () -> String) -> String? {
        switch self {
        case let .known(identifier): MediaType(path: path).mayCarryContentIdentifier ? identifier : nil
        case .unknown: AppleContentIdentifierReader.contentIdentifier(ofFileAtPath: absolutePath())
        }
    }
}
