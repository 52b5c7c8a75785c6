import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import LocalFirstSync
@testable import LFSyncSystem

/// The one way lfsync writes its small state files (identity key, config):
/// exact mode, whole contents, nothing left beside them.
@Suite struct DurableFileTests {
    static func entries(_ directory: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
    }

    static func mode(_ path: String) -> mode_t {
        var info = stat()
        return stat(path, &info) == 0 ? info.st_mode & 0o7777 : 0
    }

    /// In a process of its own (an exit test): the umask belongs to the whole
    /// process, and other tests create files beside this one.
    @Test func replaceWritesWholeWithTheExactModeAndLeavesNoTemporary() async {
        await #expect(processExitsWith: .success) {
            try await TestSupport.withTemporaryDirectory { directory throws in
                let path = directory.appendingPathComponent("config.json").path
                try Data("old".utf8).write(to: URL(fileURLWithPath: path))
                #expect(chmod(path, 0o644) == 0)
                // A permissive umask must not widen the mode either.
                umask(0)
                #expect(try DurableFile.write(Array("new contents".utf8), to: path, mode: 0o600, placement: .replace) == .written)
                #expect(try String(contentsOfFile: path, encoding: .utf8) == "new contents")
                #expect(DurableFileTests.mode(path) == 0o600)
                #expect(try DurableFileTests.entries(directory) == ["config.json"])
            }
        }
    }

    @Test func keepExistingNeverReplacesAFileAlreadyThere() async throws {
        try await TestSupport.withTemporaryDirectory { directory throws in
            let path = directory.appendingPathComponent("identity.key").path
            #expect(try DurableFile.write([1, 2, 3], to: path, placement: .keepExisting) == .written)
            #expect(try DurableFile.write([9, 9, 9], to: path, placement: .keepExisting) == .alreadyExists)
            #expect(try Array(Data(contentsOf: URL(fileURLWithPath: path))) == [1, 2, 3])
            #expect(try Self.entries(directory) == ["identity.key"])
        }
    }

    @Test func failureThrowsAndLeavesTheOldFile() async throws {
        try await TestSupport.withTemporaryDirectory { directory throws in
            // The destination is a directory: rename fails after the temporary was written.
            let path = directory.appendingPathComponent("taken").path
            try FileManager.default.createDirectory(atPath: path + "/inside", withIntermediateDirectories: true)
            #expect(throws: SystemError.self) { try DurableFile.write(Array("x".utf8), to: path, placement: .replace) }
            #expect(try Self.entries(directory) == ["taken"])
            #expect(throws: SystemError.self) { try DurableFile.write(Array("x".utf8), to: directory.path + "/missing/file") }
        }
    }
}
