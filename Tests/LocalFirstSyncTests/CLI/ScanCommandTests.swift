import Foundation
import Testing
@testable import LFSyncFixtures
@testable import LocalFirstSync
@testable import LFSyncContent
import LFSyncSystem
import LFSyncCrypto
import LFSyncStore
import LFSyncTransport
import LFSyncTCP
import LFSyncDiscovery
import LFSyncWire

/// End to end: the real binary on a real folder.
@Suite struct ScanCommandTests {
    struct Report: Decodable {
        struct Asset: Decodable {
            var contentID: String
            var kind: String
            var size: UInt64
            var files: [File]
        }
        struct File: Decodable {
            var path: String
            var role: String
            var size: UInt64
            var fileHash: String
            var chunks: Int
        }
        struct Skipped: Decodable {
            var path: String
            var reason: String
        }
        struct Statistics: Decodable {
            var files: Int
            var filesFromCache: Int
            var filesHashed: Int
        }
        var library: String
        var assets: [Asset]
        var skipped: [Skipped]
        var statistics: Statistics
    }

    /// One file with an mtime beyond what 64-bit nanoseconds hold crashed `lfsync scan`
    /// with SIGILL (and `serve`, at every restart, in its start-up scan). Now the scan
    /// finishes, lists the file, and a second scan takes it from the cache.
    @Test(.enabled(if: FileTimeTests.tmpfs != nil, "needs a writable tmpfs at /dev/shm, which keeps 64-bit seconds"))
    func aFileWithAnAbsurdTimeDoesNotCrashTheScan() async throws {
        let root = try #require(FileTimeTests.tmpfs).appendingPathComponent("lfsync-scan-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let library = root.appendingPathComponent("Pictures"), home = root.appendingPathComponent("home")
        try FileManager.default.createDirectory(at: library, withIntermediateDirectories: true)
        for name in ["future.jpg", "past.jpg", "ordinary.jpg"] {
            try Data("not really a jpeg: \(name)".utf8).write(to: library.appendingPathComponent(name))
        }
        try #require(FileTimeTests.setModificationTime(library.appendingPathComponent("future.jpg").path, seconds: 9_223_373_036))
        try #require(FileTimeTests.setModificationTime(library.appendingPathComponent("past.jpg").path, seconds: -9_223_373_036))
        try await TestSupport.waitForFilesToSettle()
        let first = try await LFSyncProcess.run(["scan", "--json", library.path], home: home)
        #expect(first.status == 0, "stderr: \(first.stderr)")
        let report = try JSONDecoder().decode(Report.self, from: Data(first.stdout.utf8))
        #expect(Set(report.assets.flatMap(\.files).map(\.path)) == ["future.jpg", "past.jpg", "ordinary.jpg"])
        let second = try await LFSyncProcess.run(["scan", "--json", library.path], home: home)
        #expect(second.status == 0, "stderr: \(second.stderr)")
        #expect(try JSONDecoder().decode(Report.self, from: Data(second.stdout.utf8)).statistics.filesHashed == 0)
    }

    @Test func jsonListsAssetsAndUsesTheCache() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let library = root.appendingPathComponent("Pictures")
            let home = root.appendingPathComponent("home")
            try SampleLibrary.write(at: library, options: .init(photoPadding: 10_000))
            try await TestSupport.waitForFilesToSettle()
            let first = try await LFSyncProcess.run(["scan", "--json", library.path], home: home)
            #expect(first.status == 0, "stderr: \(first.stderr)")
            let report = try JSONDecoder().decode(Report.self, from: Data(first.stdout.utf8))
            #expect(report.assets.count == 12)  // 6 Live Photos, 2 RAW+JPEG, a video, 2 documents, a corrupt HEIC
            #expect(report.statistics.filesHashed == report.statistics.files)
            let renamedPair = try #require(report.assets.first { $0.files.contains { $0.path == "DCIM/100APPLE/motion-clip-from-phone.mov" } })
            #expect(renamedPair.kind == "livePhoto")
            #expect(renamedPair.files.map(\.role) == ["primary", "livePhotoVideo"])
            #expect(report.skipped.map(\.path) == ["Documents/outside-link"])
            // The scan wrote its cache into the state home, nothing into the library.
            #expect(!FileManager.default.fileExists(atPath: library.appendingPathComponent(".lfsync").path))

            let second = try await LFSyncProcess.run(["scan", "--json", library.path], home: home)
            let again = try JSONDecoder().decode(Report.self, from: Data(second.stdout.utf8))
            #expect(again.statistics.filesHashed == 0)
            #expect(again.assets.map(\.contentID) == report.assets.map(\.contentID))
        }
    }

    @Test func textListingShowsRolesAndSummary() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let library = root.appendingPathComponent("Pictures")
            try TestSupport.write(MediaFixtures.liveStillHEIC(identifier: "11111111-2222-4333-8444-555555555555"), to: library.appendingPathComponent("a.heic"))
            try TestSupport.write(MediaFixtures.liveVideoMOV(identifier: "11111111-2222-4333-8444-555555555555"), to: library.appendingPathComponent("b.mov"))
            let output = try await LFSyncProcess.run(["scan", library.path], home: root.appendingPathComponent("home"))
            #expect(output.status == 0)
            #expect(output.stdout.contains("livePhoto"))
            #expect(output.stdout.contains("livePhotoVideo  b.mov"))
            #expect(output.stderr.contains("1 assets, 2 files"))
            let quiet = try await LFSyncProcess.run(["scan", "-q", library.path], home: root.appendingPathComponent("home"))
            #expect(quiet.stderr.isEmpty)
        }
    }

    @Test func usageErrorsExit64WithAHint() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let cases: [([String], String)] = [
                (["scan"], "missing argument DIR"),
                (["scna", "x"], "Did you mean 'scan'?"),
                (["scan", "--frobnicate", root.path], "unknown option '--frobnicate'"),
                (["scan", root.path, "extra"], "unexpected argument 'extra'"),
                (["scan", root.appendingPathComponent("missing").path], "is not a directory"),
            ]
            for (arguments, message) in cases {
                let output = try await LFSyncProcess.run(arguments, home: root)
                #expect(output.status == 64, "\(arguments)")
                #expect(output.stderr.contains(message), "\(arguments): \(output.stderr)")
            }
        }
    }

    @Test func helpAndVersion() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let help = try await LFSyncProcess.run(["scan", "--help"], home: root)
            #expect(help.status == 0)
            #expect(help.stdout.contains("USAGE: lfsync scan [options] DIR"))
            let version = try await LFSyncProcess.run(["--version"], home: root)
            #expect(version.stdout == "lfsync \(LFSyncVersion.current)\n")
        }
    }
}
