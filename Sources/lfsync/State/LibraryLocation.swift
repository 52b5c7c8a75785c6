import Foundation
import LFSyncContent

/// A path a person typed, placed in the library it belongs to: the nearest folder at or
/// above it that lfsync has indexed (a push, serve, pull, scan or status of it made its
/// index), so that a photo or a folder of a library is answered from — and acted on as
/// part of — that one library, never as a library of its own.
struct LibraryLocation {
    let library: URL
    /// The path inside the library; nil for the library itself.
    let within: RelativePath?

    /// Whether `path` (library-relative) is the located path or below it.
    func contains(_ path: RelativePath) -> Bool {
        guard let within else { return true }
        // By bytes, as every path is compared: an NFC folder is not its NFD twin.
        return path == within || Array(path.string.utf8).starts(with: Array((within.string + "/").utf8))
    }

    /// The indexed library at or above `path`, or nil when none is.
    /// - Parameter mayBeMissing: `path` may name a file that is gone (`versions`, `restore`).
    static func indexed(_ path: String, home: StateHome, mayBeMissing: Bool = false) throws -> LibraryLocation? {
        let url = URL(fileURLWithPath: path).standardizedFileURL
        guard mayBeMissing || FileManager.default.fileExists(atPath: url.path) else {
            throw CommandFailure(message: "'\(path)' does not exist (an offloaded file is named by its library or a folder of it)", exitCode: .usage)
        }
        var candidate = url
        while true {
            if FileManager.default.fileExists(atPath: home.libraryIndex(for: candidate).path) {
                let below = url.path.utf8.dropFirst(candidate.path.utf8.count).drop { $0 == UInt8(ascii: "/") }
                let relative = below.isEmpty ? nil : RelativePath(String(decoding: below, as: UTF8.self))
                return LibraryLocation(library: URL(fileURLWithPath: candidate.path, isDirectory: true), within: relative)
            }
            let parent = candidate.deletingLastPathComponent()
            guard parent.path != candidate.path else { return nil }
            candidate = parent
        }
    }

    /// The indexed library at or above `path`, or a usage error: a path in no library lfsync
    /// knows is never indexed as a new one by a command that only reads (`whereis /etc` would
    /// hash all of /etc).
    static func required(_ path: String, home: StateHome, mayBeMissing: Bool = false) throws -> LibraryLocation {
        guard let found = try indexed(path, home: home, mayBeMissing: mayBeMissing) else {
            throw UsageError(message: "'\(path)' is not in a library lfsync knows",
                             hint: "A library is known once it was pushed, served, pulled into or scanned ('lfsync scan DIR').")
        }
        return found
    }
}
