import Foundation

/// A folder named on the command line: it must exist and be a directory,
/// or the command stops with a usage error naming it.
enum DirectoryArgument {
    static func existing(_ path: String) throws -> URL {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw CommandFailure(message: "'\(path)' is not a directory", exitCode: .usage)
        }
        return URL(fileURLWithPath: path, isDirectory: true).standardizedFileURL
    }
}

extension DirectoryArgument {
    /// A library folder to receive into: created when it is missing (as rsync
    /// creates its destination), but never its parents — a typo in a parent
    /// should not grow a new tree somewhere. The mode is mkdir's: 0777 less the umask.
    /// - Returns: the folder and whether this call created it.
    static func creatingIfMissing(_ path: String) throws -> (url: URL, created: Bool) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw CommandFailure(message: "'\(path)' is not a directory", exitCode: .usage) }
            return (URL(fileURLWithPath: path, isDirectory: true).standardizedFileURL, false)
        }
        guard mkdir(path, 0o777) == 0 || errno == EEXIST else {
            let reason = errno == ENOENT ? "its parent folder does not exist" : String(cString: strerror(errno))
            throw CommandFailure(message: "cannot create the library '\(path)': \(reason)", exitCode: .ioError)
        }
        return (try existing(path), true)
    }
}
