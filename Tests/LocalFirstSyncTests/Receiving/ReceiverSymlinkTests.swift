import Foundation
import Testing
@testable import LFSyncSystem
@testable import LocalFirstSync
@testable import LFSyncContent
@testable import LFSyncStore
@testable import LFSyncLanding

/// A symlink anywhere — planted in the library, or swapped for lfsync's own
/// directory — must never redirect a write outside the library.
@Suite("Receiving: symlinks never redirect writes")
struct ReceiverSymlinkTests {
    typealias F = ReceivingFixtures

    @Test func symlinkedDirectoryPointingOutsideIsRefused() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            try F.symlink(setup.library.appendingPathComponent("Fotos"), to: setup.outside)
            let bytes = F.data(5000, seed: 1)
            let staged = try F.stage(bytes, F.manifest(bytes, chunkLengths: [5000]), in: setup.staging)

            #expect(throws: ReceiveError.symlinkInPath("Fotos")) {
                try setup.installer.install([(staged, try F.path("Fotos/IMG_0001.HEIC"))])
            }
            #expect(throws: ReceiveError.symlinkInPath("Fotos")) {
                try setup.installer.install([(staged, try F.path("Fotos/new/deeper/IMG_0001.HEIC"))])
            }
            #expect(F.contents(of: setup.outside).isEmpty, "nothing may appear outside the library")
            // The staged file is still there for a later, legitimate install.
            #expect(try setup.installer.install([(staged, try F.path("IMG_0001.HEIC"))]) == [.installed(try F.path("IMG_0001.HEIC"))])
        }
    }

    @Test func symlinkDeeperInThePathIsRefused() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            try FileManager.default.createDirectory(at: setup.library.appendingPathComponent("a/b"), withIntermediateDirectories: true)
            try F.symlink(setup.library.appendingPathComponent("a/b/evil"), to: setup.outside)
            #expect(throws: ReceiveError.symlinkInPath("a/b/evil")) {
                _ = try setup.directory.openDirectory(["a", "b", "evil", "c"], create: true)
            }
            #expect(F.contents(of: setup.outside).isEmpty)
        }
    }

    @Test func symlinkAtTheFinalNameIsNeitherFollowedNorReplaced() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            let target = setup.outside.appendingPathComponent("precious.txt")
            try F.write([1, 2, 3], to: target)
            let link = setup.library.appendingPathComponent("IMG_0001.HEIC")
            try F.symlink(link, to: target)

            let bytes = F.data(3000, seed: 2)
            let manifest = F.manifest(bytes, chunkLengths: [1000, 2000])
            let staged = try F.stage(bytes, manifest, in: setup.staging)
            let results = try setup.installer.install([(staged, try F.path("IMG_0001.HEIC"))])

            let conflict = "IMG_0001 (conflict \(manifest.fileHash.hex.prefix(8))).HEIC"
            #expect(results == [.conflictRenamed(original: try F.path("IMG_0001.HEIC"), storedAs: try F.path(conflict))])
            #expect(try F.read(target) == [1, 2, 3])
            #expect(try F.status(link).kind == .symlink)
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link.path) == target.path)
            #expect(try F.read(setup.library.appendingPathComponent(conflict)) == bytes)
            #expect(F.contents(of: setup.outside) == ["precious.txt"])
        }
    }

    @Test func stateDirectoryReplacedBySymlinkIsRefused() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let library = root.appendingPathComponent("library")
            let outside = root.appendingPathComponent("outside")
            try FileManager.default.createDirectory(at: library, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
            try F.symlink(library.appendingPathComponent(".lfsync"), to: outside)
            let directory = try LibraryDirectory(path: library.path)
            #expect(throws: ReceiveError.symlinkInPath(".lfsync")) { try StagingArea(library: directory) }
            #expect(F.contents(of: outside).isEmpty)
        }
    }

    @Test func stagingDirectoryReplacedBySymlinkIsRefused() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let library = root.appendingPathComponent("library")
            let outside = root.appendingPathComponent("outside")
            try FileManager.default.createDirectory(at: library.appendingPathComponent(".lfsync"), withIntermediateDirectories: true)
            try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
            try F.symlink(library.appendingPathComponent(".lfsync/staging"), to: outside)
            let directory = try LibraryDirectory(path: library.path)
            #expect(throws: ReceiveError.symlinkInPath(".lfsync/staging")) { try StagingArea(library: directory) }
            #expect(F.contents(of: outside).isEmpty)
        }
    }

    @Test func stagingIsPrivate() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            let mode = try FileManager.default.attributesOfItem(atPath: setup.stagingURL.path)[.posixPermissions] as? Int
            #expect(mode == 0o700)
            let bytes = F.data(100, seed: 3)
            let file = try IncomingFile.prepare(in: setup.staging, manifest: F.manifest(bytes, chunkLengths: [100]))
            try file.write(chunkAt: 0, bytes: bytes)
            // A one-chunk file is staged directly under a private name, a larger one as
            // `<hash>.partial`: whichever names exist, each must be private to the owner.
            let staged = try FileManager.default.contentsOfDirectory(atPath: setup.stagingURL.path)
            #expect(staged.count == 1)
            for name in staged {
                let path = setup.stagingURL.appendingPathComponent(name).path
                #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o600)
            }
        }
    }

    @Test func symlinkPlantedAtThePartialNameIsRemovedNotFollowed() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            let bytes = F.data(4096, seed: 4)
            // Two chunks: only files of more than one chunk are staged as `<hash>.partial`.
            let manifest = F.manifest(bytes, chunkLengths: [2048, 2048])
            let target = setup.outside.appendingPathComponent("victim")
            try F.write([9, 9, 9], to: target)
            try F.symlink(setup.stagingURL.appendingPathComponent(manifest.fileHash.hex + ".partial"), to: target)

            let file = try IncomingFile.prepare(in: setup.staging, manifest: manifest)
            try file.write(chunkAt: 0, bytes: F.chunk(0, of: bytes, manifest))
            // Removed: the name is a regular file of ours now, not the link, and the link's target
            // got none of the bytes.
            let partial = try FileStatus.of(path: setup.stagingURL.appendingPathComponent(manifest.fileHash.hex + ".partial").path)
            #expect(partial.kind == .regular)
            #expect(try F.read(target) == [9, 9, 9])
            try file.write(chunkAt: 1, bytes: F.chunk(1, of: bytes, manifest))
            _ = try file.verify()
            #expect(try F.read(target) == [9, 9, 9])
        }
    }

    @Test func hardLinkedPartialIsReplacedNotWrittenThrough() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            let bytes = F.data(4096, seed: 5)
            let manifest = F.manifest(bytes, chunkLengths: [2048, 2048])
            let victim = setup.library.appendingPathComponent("victim.bin")
            try F.write(Array(repeating: 7, count: 4096), to: victim)
            try FileManager.default.linkItem(at: victim, to: setup.stagingURL.appendingPathComponent(manifest.fileHash.hex + ".partial"))

            let file = try IncomingFile.prepare(in: setup.staging, manifest: manifest)
            for index in 0..<2 { try file.write(chunkAt: index, bytes: F.chunk(index, of: bytes, manifest)) }
            #expect(try F.read(victim) == Array(repeating: 7, count: 4096))
        }
    }

    @Test func copyChunkDoesNotReadThroughSymlinks() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            let bytes = F.data(2048, seed: 6)
            let manifest = F.manifest(bytes, chunkLengths: [2048])
            try F.write(bytes, to: setup.outside.appendingPathComponent("secret"))
            try F.symlink(setup.library.appendingPathComponent("link"), to: setup.outside.appendingPathComponent("secret"))
            try F.symlink(setup.library.appendingPathComponent("dir"), to: setup.outside)
            let file = try IncomingFile.prepare(in: setup.staging, manifest: manifest)
            let stamp = FileStamp(size: 2048, modificationTimeNs: 0, inode: 0)
            #expect(try !file.copyChunk(at: 0, from: .library(ChunkLocation(path: "link", offset: 0, length: 2048, stamp: stamp))))
            #expect(try !file.copyChunk(at: 0, from: .library(ChunkLocation(path: "dir/secret", offset: 0, length: 2048, stamp: stamp))))
            #expect(try !file.copyChunk(at: 0, from: .library(ChunkLocation(path: "../outside/secret", offset: 0, length: 2048, stamp: stamp))))
        }
    }
}
