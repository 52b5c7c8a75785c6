import LFSyncSystem

/// Why the identity key file could not be loaded or created. Every case names
/// the file, because the fix is always something the user does to that file.
public enum DeviceIdentityError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No key file yet (`loadOrCreate` handles this by creating one).
    case notFound(path: String)
    /// The file's permission bits (`mode`, e.g. 0o644) let group or others read or write it.
    case insecurePermissions(path: String, mode: UInt32)
    /// Not a regular file, wrong size, or not a usable key.
    case invalidKeyFile(path: String, reason: String)
    case cannotCreateDirectory(path: String, reason: String)
    /// A system call failed (permissions of the directory, disk full, ...).
    case system(SystemError)

    public var description: String {
        switch self {
        case let .notFound(path):
            "no device identity at \(path)"
        case let .insecurePermissions(path, mode):
            "refusing to use the device key \(path): its mode is \(Self.octal(mode)), so other users could read it; "
                + "run `chmod 600 \(path)` if you are sure nobody copied it, or delete it to become a new device"
        case let .invalidKeyFile(path, reason):
            "\(path) is not a valid device key file: \(reason)"
        case let .cannotCreateDirectory(path, reason):
            "cannot create the directory \(path) for the device key: \(reason)"
        case let .system(error):
            error.description
        }
    }

    private static func octal(_ mode: UInt32) -> String {
        let digits = String(mode, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
