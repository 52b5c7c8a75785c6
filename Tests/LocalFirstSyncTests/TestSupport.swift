import Foundation

/// Paths and scratch directories shared by the test suites.
enum TestSupport {
    /// The package root, found from this file's location (tests run from any working directory).
    static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static let vectorsDirectory = packageRoot.appendingPathComponent("Tests/LocalFirstSyncTests/Vectors")

    /// `../shared/` beside the checkout, as CI lays it out.
    static let sharedDirectory = packageRoot.deletingLastPathComponent().appendingPathComponent("shared")

    /// A fresh empty directory, removed when `body` returns.
    static func withTemporaryDirectory<T>(_ body: (URL) async throws -> T) async rethrows -> T {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("lfsync-test-\(UUID().uuidString)", isDirectory: true)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: url) }
        return try await body(url)
    }

    static func write(_ bytes: [UInt8], to url: URL) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(bytes).write(to: url)
    }
}
