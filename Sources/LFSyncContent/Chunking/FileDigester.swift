import LFSyncSystem

/// Turns a file on disk into a `FileManifest`, reading it exactly once
/// through a fixed-size buffer.
package struct FileDigester: Sendable {
    package static let defaultBufferSize = 1 << 20

    package let configuration: ChunkerConfiguration
    package let bufferSize: Int

    package init(configuration: ChunkerConfiguration = .default, bufferSize: Int = FileDigester.defaultBufferSize) {
        self.configuration = configuration
        self.bufferSize = bufferSize
    }

    package enum Failure: Error, Sendable, CustomStringConvertible {
        case system(SystemError)
        case notRegularFile(path: String)
        /// Size, mtime or inode moved while we read: the hash would describe no real version of the file.
        case changedWhileReading(path: String)

        package var description: String {
            switch self {
            case let .system(error): error.description
            case let .notRegularFile(path): "\(path): not a regular file"
            case let .changedWhileReading(path): "\(path): file changed while it was being read"
            }
        }
    }

    /// - Parameters:
    ///   - absolutePath: where to read.
    ///   - relativePath: the library-relative name recorded in the manifest.
    ///   - expected: the status seen by the directory walk; a different one fails.
    ///   - buffer: scratch space reused across files by one worker.
    package func manifest(
        absolutePath: String, relativePath: String, expected: FileStatus? = nil,
        buffer: UnsafeMutableRawBufferPointer
    ) throws(Failure) -> (manifest: FileManifest, status: FileStatus) {
        var hasher = ChunkingHasher(configuration: configuration)
        return try manifest(absolutePath: absolutePath, relativePath: relativePath, expected: expected, buffer: buffer, hasher: &hasher)
    }

    /// The same with a hasher reused across files by one worker (left reset).
    ///
    /// `whole` is shown the file's bytes when one read brought all of them
    /// (most files of a photo library by count; an empty file too): a caller that wants more from
    /// a small file — its Live Photo identifier — reads it from there rather
    /// than opening the file a second time. Called only for a file that did
    /// not change while it was read, with exactly the bytes that were hashed.
    package func manifest(
        absolutePath: String, relativePath: String, expected: FileStatus? = nil,
        buffer: UnsafeMutableRawBufferPointer, hasher: inout ChunkingHasher,
        whole: (UnsafeRawBufferPointer) -> Void = { _ in }
    ) throws(Failure) -> (manifest: FileManifest, status: FileStatus) {
        let file = try Self.mapping { () throws(SystemError) in try ReadOnlyFile(path: absolutePath, nonBlocking: true, size: expected?.size) }
        let before = try Self.mapping { () throws(SystemError) in try file.status() }
        guard before.kind == .regular else { throw .notRegularFile(path: relativePath) }
        if let expected, !expected.hasSameStamp(as: before) { throw .changedWhileReading(path: relativePath) }
        // However this ends, the next file starts from a clean state.
        var finished = false
        defer { if !finished { _ = hasher.finishAndReset() } }
        var lastCount = 0
        while true {
            let count = try Self.mapping { () throws(SystemError) in try file.read(into: buffer) }
            if count == 0 { break }
            hasher.update(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            lastCount = count
        }
        let after = try Self.mapping { () throws(SystemError) in try file.status() }
        let (fileHash, chunks) = hasher.finishAndReset()
        finished = true
        let total = chunks.reduce(UInt64(0)) { $0 + UInt64($1.length) }
        guard after.hasSameStamp(as: before), after.changeTimeNs == before.changeTimeNs, total == after.size else {
            throw .changedWhileReading(path: relativePath)
        }
        let manifest = FileManifest(
            path: RelativePath(relativePath), size: after.size, modificationTimeNs: after.modificationTimeNs,
            derivedFileHash: fileHash, chunks: chunks, permissions: after.permissions)
        // The size was just checked against the bytes hashed: a last read as large as the file was the only one.
        if after.size == UInt64(lastCount) { whole(UnsafeRawBufferPointer(rebasing: buffer[0..<lastCount])) }
        return (manifest, after)
    }

    private static func mapping<T>(_ body: () throws(SystemError) -> T) throws(Failure) -> T {
        do { return try body() } catch { throw .system(error) }
    }

    /// Convenience for callers without their own buffer.
    package func manifest(absolutePath: String, relativePath: String) throws(Failure) -> FileManifest {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bufferSize, alignment: 64)
        defer { buffer.deallocate() }
        return try manifest(absolutePath: absolutePath, relativePath: relativePath, buffer: buffer).manifest
    }
}
