#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A failed system call, carried as a Swift value: which call, on what, and
/// the errno, so a user sees "open photos/a.heic: Permission denied" rather
/// than a bare code.
public struct SystemError: Error, Equatable, Sendable, CustomStringConvertible {
    public let operation: String
    public let path: String?
    public let errno: Int32

    public init(_ operation: String, path: String? = nil, errno: Int32) {
        self.operation = operation
        self.path = path
        self.errno = errno
    }

    /// Captures the current `errno` after a failed call.
    package static func current(_ operation: String, path: String? = nil) -> SystemError {
        SystemError(operation, path: path, errno: Glibc.errno)
    }

    public var message: String { String(cString: strerror(errno)) }

    public var description: String {
        if let path { return "\(operation) \(path): \(message)" }
        return "\(operation): \(message)"
    }
}
