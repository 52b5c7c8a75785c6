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
