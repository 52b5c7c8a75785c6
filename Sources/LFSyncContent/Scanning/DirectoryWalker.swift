#if canImport(Glibc)
import Glibc
#endif
import LFSyncSystem

/// Lists the regular files under a library root without ever leaving it.
///
/// Every directory is opened relative to its parent's descriptor with
/// `O_NOFOLLOW | O_DIRECTORY`, so neither a symlink found during the walk nor
/// one swapped in mid-walk can lead outside the library. Symlinks and special
/// files are reported as skipped, never followed.
struct DirectoryWalker {
    package struct Entry: Sendable {
        var relativePath: RelativePath
        var status: FileStatus
    }

    package static let maxDepth = 128

    package let rootPath: String
    /// Top-level names that belong to lfsync itself (its staging and state), as bytes:
    /// never walked, never listed, whatever the ignore rules say.
    package let excludedTopLevelNames: Set<[UInt8]>
    /// The user's and the built-in exclusions; an excluded directory is not entered
    /// (gitignore: nothing below it can be included again).
    package let ignore: IgnoreRules

    package init(rootPath: String, ignore: IgnoreRules = IgnoreRules(), excludedTopLevelNames: Set<String> = [LibraryLayout.stateDirectoryName]) {
        self.rootPath = rootPath
        self.ignore = ignore
        self.excludedTopLevelNames = Set(excludedTopLevelNames.map { Array($0.utf8) })
    }

    /// What a walk found: the regular files to scan, what could not be taken, and
    /// what the ignore rules left out (an excluded directory once, as `dir/`).
    package struct Found: Sendable {
        package var files: [Entry] = []
        package var skipped: [SkippedEntry] = []
        package var excluded: [RelativePath] = []
    }

    package func walk() throws(SystemError) -> Found {
        let rootDescriptor = open(rootPath, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard rootDescriptor >= 0 else { throw SystemError.current("open", path: rootPath) }
        var found = Found()
        try walk(directory: rootDescriptor, prefix: "", depth: 0, found: &found)
        return found
    }

    /// Takes ownership of `descriptor` and closes it.
    private func walk(directory descriptor: Int32, prefix: RelativePath, depth: Int, found: inout Found) throws(SystemError) {
        guard let stream = fdopendir(descriptor) else {
            let error = SystemError.current("opendir", path: prefix.string.isEmpty ? rootPath : prefix.string)
            close(descriptor)
            throw error
        }
        defer { closedir(stream) }
        var names: [[UInt8]] = []
        while let entry = readdir(stream) {
            let name = DirectoryEntryName.bytes(of: entry)
            if name == [UInt8(ascii: ".")] || name == [UInt8(ascii: "."), UInt8(ascii: ".")] { continue }
            names.append(name)
        }
        names.sort { $0.lexicographicallyPrecedes($1) }
        // A directory's files come out together, before its subdirectories: the grouper, which
        // pairs files within one directory only, can then take the library a directory at a time.
        var subdirectories: [(name: String, relative: RelativePath)] = []
        let checksRules = !ignore.isEmpty
        for rawName in names {
            if prefix.string.isEmpty, excludedTopLevelNames.contains(rawName) { continue }
            guard let name = String(validating: rawName, as: UTF8.self) else {
                // Shown with replacement characters: the wire and the caches carry UTF-8 only.
                found.skipped.append(SkippedEntry(path: prefix.appending(String(decoding: rawName, as: UTF8.self)), reason: "name is not valid UTF-8"))
                continue
            }
            let relative = prefix.appending(name)
            var raw = stat()
            // `withCString`: a short name passed as a String argument would be copied to the heap.
            guard name.withCString({ fstatat(descriptor, $0, &raw, AT_SYMLINK_NOFOLLOW) }) == 0 else {
                found.skipped.append(SkippedEntry(path: relative, reason: SystemError.current("stat").message))
                continue
            }
            let status = FileStatus(raw)
            if checksRules, ignore.isExcluded(relative.string, isDirectory: status.kind == .directory) {
                found.excluded.append(status.kind == .directory ? RelativePath(relative.string + "/") : relative)
                continue
            }
            switch status.kind {
            case .regular:
                // What a receiver would refuse is never offered: it is listed, with the rule it breaks.
                do {
                    _ = try LibraryPath.validate(relative)
                    found.files.append(Entry(relativePath: relative, status: status))
                } catch {
                    found.skipped.append(SkippedEntry(path: relative, reason: "cannot be sent: \(error.reason)"))
                }
            case .directory:
                guard depth + 1 < Self.maxDepth else {
                    found.skipped.append(SkippedEntry(path: relative, reason: "nested deeper than \(Self.maxDepth) levels"))
                    continue
                }
                subdirectories.append((name, relative))
            case .symlink:
                found.skipped.append(SkippedEntry(path: relative, reason: "symbolic link (not followed)"))
            case .other:
                found.skipped.append(SkippedEntry(path: relative, reason: "not a regular file"))
            }
        }
        for (name, relative) in subdirectories {
            let child = openat(descriptor, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard child >= 0 else {
                found.skipped.append(SkippedEntry(path: relative, reason: SystemError.current("open").message))
                continue
            }
            try walk(directory: child, prefix: relative, depth: depth + 1, found: &found)
        }
    }
}
