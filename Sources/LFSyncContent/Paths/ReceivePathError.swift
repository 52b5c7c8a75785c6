/// Why a path received from a peer was refused, and which path (escaped, so
/// the message itself cannot carry terminal escapes or fake log lines).
package struct ReceivePathError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Reason: Hashable, Sendable, CustomStringConvertible {
        case empty
        /// Starts with `/`.
        case absolute
        /// A `.` or `..` component.
        case dotComponent
        /// `a//b`, or a trailing `/`.
        case emptyComponent
        /// NUL, or a C0, DEL or C1 control character other than tab, line feed and carriage return.
        case controlCharacter
        case tooLong(bytes: Int)
        case componentTooLong(bytes: Int)
        case tooDeep(components: Int)
        /// Its first component names lfsync's own state directory.
        case reserved

        public var description: String {
            switch self {
            case .empty: "the path is empty"
            case .absolute: "the path is absolute"
            case .dotComponent: "the path has a '.' or '..' component"
            case .emptyComponent: "the path has an empty component"
            case .controlCharacter: "the path contains a control character"
            case let .tooLong(bytes): "the path is \(bytes) bytes long (limit \(LibraryPath.maxPathBytes))"
            case let .componentTooLong(bytes): "a path component is \(bytes) bytes long (limit \(LibraryPath.maxComponentBytes))"
            case let .tooDeep(components): "the path has \(components) components (limit \(LibraryPath.maxComponents))"
            case .reserved: "the path is inside lfsync's reserved '\(LibraryLayout.stateDirectoryName)' directory"
            }
        }
    }

    public let reason: Reason
    /// The offending path, escaped for display (see `PrintablePath`).
    public let displayPath: String

    public init(_ reason: Reason, path: String) {
        self.reason = reason
        displayPath = PrintablePath.escape(path)
    }

    public var description: String { "rejected path \"\(displayPath)\": \(reason)" }
}
