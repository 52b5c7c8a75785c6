import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A directory tree read with `readdir` and `lstat` on raw name bytes, owing
/// nothing to the code under test (nor to Foundation, whose path handling is
/// not promised to keep normalisation twins apart).
struct RawTree {
    enum Kind: Equatable { case regular, directory, symlink, other }

    struct Entry {
        var kind: Kind
        var size: UInt64
        var inode: UInt64
        var links: UInt64
        /// Permission bits (`st_mode & 0o7777`).
        var mode: UInt32 = 0
    }

    /// Every entry below the root, keyed by its relative path's bytes; the
    /// top-level `.lfsync` is left out.
    private(set) var entries: [[UInt8]: Entry] = [:]
    let root: String

    init(_ root: URL) throws {
        self.root = root.path
        try walk(prefix: [])
    }

    var regularFiles: [[UInt8]] { entries.filter { $0.value.kind == .regular }.map(\.key) }

    /// Runs `body` with the NUL-terminated bytes of `root/relative`, whatever those bytes are.
    private func withPath<T>(_ relative: [UInt8], _ body: (UnsafePointer<CChar>) -> T) -> T {
        let bytes = Array(root.utf8) + (relative.isEmpty ? [] : [UInt8(ascii: "/")] + relative) + [0]
        return bytes.withUnsafeBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: bytes.count) { body($0) }
        }
    }

    private mutating func walk(prefix: [UInt8]) throws {
        guard let stream = withPath(prefix, { opendir($0) }) else {
            throw CocoaError(.fileReadUnknown, userInfo: [NSFilePathErrorKey: String(decoding: prefix, as: UTF8.self)])
        }
        defer { closedir(stream) }
        var names: [[UInt8]] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix(while: { $0 != 0 })) }
            if name == Array(".".utf8) || name == Array("..".utf8) { continue }
            if prefix.isEmpty, name == Array(".lfsync".utf8) { continue }
            names.append(name)
        }
        for name in names {
            let relative = prefix.isEmpty ? name : prefix + [UInt8(ascii: "/")] + name
            var raw = stat()
            guard withPath(relative, { lstat($0, &raw) }) == 0 else { continue }
            let kind: Kind = switch raw.st_mode & S_IFMT {
            case S_IFREG: .regular
            case S_IFDIR: .directory
            case S_IFLNK: .symlink
            default: .other
            }
            entries[relative] = Entry(kind: kind, size: UInt64(raw.st_size), inode: UInt64(raw.st_ino), links: UInt64(raw.st_nlink),
                                      mode: UInt32(raw.st_mode & 0o7777))
            if kind == .directory { try walk(prefix: relative) }
        }
    }

    /// The bytes of the file at `relative`.
    func contents(of relative: [UInt8]) throws -> [UInt8] {
        let fd = withPath(relative) { open($0, O_RDONLY | O_NOFOLLOW) }
        guard fd >= 0 else {
            throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: String(decoding: relative, as: UTF8.self)])
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = read(fd, &buffer, buffer.count)
            guard count > 0 else { break }
            bytes += buffer[0..<count]
        }
        return bytes
    }

    /// Whether lfsync's built-in ignore rules leave `path` out, decided here from the
    /// names in its manual (not by the code under test): junk files by name, junk
    /// folders anywhere in the path.
    static func isDefaultExcluded(_ path: [UInt8]) -> Bool {
        let components = String(decoding: path, as: UTF8.self).split(separator: "/").map(String.init)
        guard let name = components.last else { return false }
        if [".DS_Store", "Thumbs.db", "desktop.ini"].contains(name) || name.hasPrefix("._") { return true }
        return components.dropLast().contains { ["@eaDir", ".thumbnails", ".lfsync"].contains($0) || $0.hasPrefix(".Trash-") }
    }
}
