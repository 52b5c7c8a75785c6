#if canImport(Glibc)
import Glibc
#endif

/// Lists the regular files under a library root without ever leaving it.
///
/// Every directory is opened relative to its parent's descriptor with
/// `O_NOFOLLOW | O_DIRECTORY`, so neither a symlink found during the walk nor
/// one swapped in mid-walk can lead outside the library. Symlinks and special
/// files are reported as skipped, never followed.
struct DirectoryWalker {
    struct Entry: Sendable {
        var relativePath: String
        var status: FileStatus
    }

    static let maxDepth = 128

    let rootPath: String
    /// Top-level names that belong to lfsync itself (its staging and state).
    let excludedTopLevelNames: Set<String>

    init(rootPath: String, excludedTopLevelNames: Set<String> = [LibraryLayout.stateDirectoryName]) {
        self.rootPath = rootPath
        self.excludedTopLevelNames = excludedTopLevelNames
    }

    func walk() throws(SystemError) -> (files: [Entry], skipped: [SkippedEntry]) {
        let rootDescriptor = open(rootPath, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard rootDescriptor >= 0 else { throw SystemError.current("open", path: rootPath) }
        var files: [Entry] = []
        var skipped: [SkippedEntry] = []
        try walk(directory: rootDescriptor, prefix: "", depth: 0, files: &files, skipped: &skipped)
        return (files, skipped)
    }

    /// Takes ownership of `descriptor` and closes it.
    private func walk(
        directory descriptor: Int32, prefix: String, depth: Int,
        files: inout [Entry], skipped: inout [SkippedEntry]
    ) throws(SystemError) {
        guard let stream = fdopendir(descriptor) else {
            let error = SystemError.current("opendir", path: prefix.isEmpty ? rootPath : prefix)
            close(descriptor)
            throw error
        }
        defer { closedir(stream) }
        var names: [[UInt8]] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                Array(raw.prefix(while: { $0 != 0 }))
            }
            if name == [UInt8(ascii: ".")] || name == [UInt8(ascii: "."), UInt8(ascii: ".")] { continue }
            names.append(name)
        }
        names.sort { $0.lexicographicallyPrecedes($1) }
        for rawName in names {
            guard let name = String(validating: rawName, as: UTF8.self) else {
                skipped.append(SkippedEntry(path: prefix + String(decoding: rawName, as: UTF8.self), reason: "name is not valid UTF-8"))
                continue
            }
            let relative = prefix + name
            if prefix.isEmpty, excludedTopLevelNames.contains(name) { continue }
            var raw = stat()
            guard fstatat(descriptor, name, &raw, AT_SYMLINK_NOFOLLOW) == 0 else {
                skipped.append(SkippedEntry(path: relative, reason: SystemError.current("stat").message))
                continue
            }
            let status = FileStatus(raw)
            switch status.kind {
            case .regular:
                if relative.utf8.count > FileManifest.Limits.maxPathBytes {
                    skipped.append(SkippedEntry(path: relative, reason: "path longer than \(FileManifest.Limits.maxPathBytes) bytes"))
                } else {
                    files.append(Entry(relativePath: relative, status: status))
                }
            case .directory:
                guard depth + 1 < Self.maxDepth else {
                    skipped.append(SkippedEntry(path: relative, reason: "nested deeper than \(Self.maxDepth) levels"))
                    continue
                }
                let child = openat(descriptor, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                guard child >= 0 else {
                    skipped.append(SkippedEntry(path: relative, reason: SystemError.current("open").message))
                    continue
                }
                try walk(directory: child, prefix: relative + "/", depth: depth + 1, files: &files, skipped: &skipped)
            case .symlink:
                skipped.append(SkippedEntry(path: relative, reason: "symbolic link (not followed)"))
            case .other:
                skipped.append(SkippedEntry(path: relative, reason: "not a regular file"))
            }
        }
    }
}
