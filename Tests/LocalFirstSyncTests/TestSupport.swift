import Foundation
#if canImport(Glibc)
import Glibc
#endif
@testable import LocalFirstSync
@testable import LFSyncContent

/// Paths and scratch directories shared by the test suites.
enum TestSupport {
    /// The package root, found from this file's location (tests run from any working directory).
    static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static let vectorsDirectory = packageRoot.appendingPathComponent("Tests/LocalFirstSyncTests/Vectors")

    /// A fresh empty directory, removed when `body` returns.
    static func withTemporaryDirectory<T>(_ body: (URL) async throws -> T) async rethrows -> T {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("lfsync-test-\(UUID().uuidString)", isDirectory: true)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: url) }
        return try await body(url)
    }

    /// Waits until files written so far count as settled for the scanner: only then may
    /// it recognise them by their ctime (a file hashed sooner is hashed again next time).
    static func waitForFilesToSettle() async throws {
        try await Task.sleep(for: .nanoseconds(LibraryScanner.settlingTimeNs + 200_000_000))
    }

    /// Overwrites the file at `url` with `bytes` (the same length), then puts its mtime back
    /// to the nanosecond, as `touch -r` or `exiftool -P` would: only the ctime shows the edit.
    static func overwriteKeepingMtime(_ url: URL, with bytes: [UInt8]) throws {
        var before = stat()
        guard lstat(url.path, &before) == 0 else { throw CocoaError(.fileNoSuchFile) }
        try Data(bytes).write(to: url)
        var times = [timespec(tv_sec: 0, tv_nsec: (1 << 30) - 2), before.st_mtim]  // atime: UTIME_OMIT
        guard utimensat(AT_FDCWD, url.path, &times, 0) == 0 else { throw CocoaError(.fileWriteUnknown) }
    }

    static func write(_ bytes: [UInt8], to url: URL) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(bytes).write(to: url)
    }
}
