import Foundation
import Testing
@testable import LocalFirstSync
@testable import LFSyncStore
@testable import LFSyncLanding

@Suite("Receiving: library directory")
struct LibraryDirectoryTests {
    typealias F = ReceivingFixtures

    @Test func reportsFreeSpace() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            let space = try setup.directory.space()
            #expect(space.available > 0)
            #expect(space.total >= space.available)
            try setup.staging.makeRoom(for: 1, now: 0)
            do throws(ReceiveError) {
                try setup.staging.makeRoom(for: .max, now: 0)
                Issue.record("an offer of 2^64 - 1 bytes fitted")
            } catch {
                guard case let .insufficientSpace(needed, _, reserved) = error else { Issue.record("\(error)"); return }
                #expect(needed == .max)
                #expect(reserved == StagingPolicy.reserve(fileSystemBytes: space.total))
                #expect(error.description.contains("not enough free space"))
            }
        }
    }

    @Test func createsMissingDirectoriesAndReportsThem() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            try FileManager.default.createDirectory(at: setup.library.appendingPathComponent("a"), withIntermediateDirectories: true)
            let walk = try setup.directory.openDirectory(["a", "b", "c"], create: true)
            #expect(walk.created.map(\.name) == ["b", "c"])
            var isDirectory: ObjCBool = false
            #expect(FileManager.default.fileExists(atPath: setup.library.appendingPathComponent("a/b/c").path, isDirectory: &isDirectory))
            #expect(isDirectory.boolValue)
            #expect(try setup.directory.openDirectory(["a", "b", "c"], create: true).created.isEmpty)
        }
    }

    /// `Dg+s` from the receiver's own rules: mkdir drops setgid, so it is set on the new
    /// directory's descriptor; a setuid bit is never given to a directory.
    @Test func newDirectoriesGetTheSetgidBitTheRulesAskFor() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let library = root.appendingPathComponent("library")
            try FileManager.default.createDirectory(at: library, withIntermediateDirectories: true)
            let modes = NewFileModes(umask: 0o002, chmod: try ChmodRules(parsing: "Dg+s,Du+s,ug+rw,Fo-w"))
            #expect(modes.directoryMode == 0o2775)
            let directory = try LibraryDirectory(path: library.path, modes: modes)
            _ = try directory.openDirectory(["2026", "Trip"], create: true)
            for folder in ["2026", "2026/Trip"] {
                var raw = stat()
                #expect(lstat(library.appendingPathComponent(folder).path, &raw) == 0)
                #expect(raw.st_mode & 0o7777 == 0o2775, "\(folder): \(String(raw.st_mode & 0o7777, radix: 8))")
            }
            #expect(NewFileModes(umask: 0o022).directoryMode == 0o755)
        }
    }

    @Test func fileInTheWayIsNotADirectory() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            try F.write([1], to: setup.library.appendingPathComponent("a"))
            #expect(throws: ReceiveError.notADirectory("a")) { _ = try setup.directory.openDirectory(["a", "b"], create: true) }
        }
    }

    @Test func missingDirectoryIsNotCreatedForReading() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            #expect(throws: ReceiveError.self) { _ = try setup.directory.openDirectory(["nope"], create: false) }
            #expect(!FileManager.default.fileExists(atPath: setup.library.appendingPathComponent("nope").path))
        }
    }
}
