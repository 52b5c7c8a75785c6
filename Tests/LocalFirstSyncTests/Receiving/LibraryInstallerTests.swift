import Foundation
import Testing
@testable import LocalFirstSync
@testable import LFSyncContent
@testable import LFSyncCrypto
@testable import LFSyncStore
@testable import LFSyncLanding

@Suite("Receiving: installing into the library")
struct LibraryInstallerTests {
    typealias F = ReceivingFixtures

    @Test func installsANewFileInNewDirectories() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            let bytes = F.data(4000, seed: 30)
            let staged = try F.stage(bytes, F.manifest(bytes, chunkLengths: [4000]), in: setup.staging)
            let path = try F.path("Fotos/Ürlaub 🌊/IMG.HEIC")
            #expect(try setup.installer.install([(staged, path)]) == [.installed(path)])
            #expect(try F.read(setup.library.appendingPathComponent("Fotos/Ürlaub 🌊/IMG.HEIC")) == bytes)
            #expect(F.contents(of: setup.stagingURL).isEmpty)
            #expect(throws: ReceiveError.stagedFileMissing(fileHash: staged.fileHash)) {
                try setup.installer.install([(staged, try F.path("again.HEIC"))])
            }
        }
    }

    /// The installer no longer looks a verified staged file up before its rename: the check
    /// that the name still led to the very file verified happens right after it, and what the
    /// rename moved goes straight back to staging.
    @Test func aStagedNameReplacedBeforeInstallingIsMovedBackOut() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            let bytes = F.data(4000, seed: 36)
            let staged = try F.stage(bytes, F.manifest(bytes, chunkLengths: [4000]), in: setup.staging)
            #expect(staged.identity != nil, "a file verified by this process carries its identity")
            let stagedURL = setup.stagingURL.appendingPathComponent(staged.name)

            // Another file of the same size under the staged name (made while the staged file
            // still exists, so that it cannot reuse its inode number).
            let impostor = F.data(4000, seed: 37)
            let impostorURL = setup.stagingURL.appendingPathComponent("impostor")
            try F.write(impostor, to: impostorURL)
            #expect(rename(impostorURL.path, stagedURL.path) == 0)
            let path = try F.path("IMG_0100.HEIC")
            #expect(throws: ReceiveError.stagedFileMissing(fileHash: staged.fileHash)) {
                try setup.installer.install([(staged, path)])
            }
            #expect(F.contents(of: setup.library) == [".lfsync"], "nothing stayed in the library")
            #expect(try F.read(stagedURL) == impostor, "what the rename moved went back to staging")

            // A symbolic link under the staged name: never left in the library either.
            try FileManager.default.removeItem(at: stagedURL)
            try F.symlink(stagedURL, to: setup.outside)
            #expect(throws: ReceiveError.stagedFileMissing(fileHash: staged.fileHash)) {
                try setup.installer.install([(staged, path)])
            }
            #expect(F.contents(of: setup.library) == [".lfsync"])
            #expect(F.contents(of: setup.outside).isEmpty)
        }
    }

    /// Another program renames its own file over the name in the moment between lfsync's
    /// rename and its check: the check fails and the asset rolls back — and the rollback
    /// leaves that program's file where it put it (it used to move it into staging, where
    /// the importer's discard then unlinked it). The asset's other file, lfsync's, goes back.
    @Test func aRollbackNeverTakesAnotherProgramsFile() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            let still = F.data(3000, seed: 40), video = F.data(5000, seed: 41), theirs = F.data(5000, seed: 42)
            let stillStaged = try F.stage(still, F.manifest(still, chunkLengths: [3000]), in: setup.staging)
            let videoStaged = try F.stage(video, F.manifest(video, chunkLengths: [5000]), in: setup.staging)
            let theirsURL = setup.library.appendingPathComponent("their-download.part")
            try F.write(theirs, to: theirsURL)
            let installer = LibraryInstaller(staging: setup.staging, strategy: .best) { name, directory in
                guard name == "IMG_0001.MOV" else { return }
                _ = renameat(directory.rawValue, "../their-download.part", directory.rawValue, name)
            }
            try FileManager.default.createDirectory(at: setup.library.appendingPathComponent("Live"), withIntermediateDirectories: true)
            let asset = [(stillStaged, try F.path("IMG_0001.HEIC")), (videoStaged, try F.path("Live/IMG_0001.MOV"))]
            #expect(throws: ReceiveError.stagedFileMissing(fileHash: videoStaged.fileHash)) { try installer.install(asset) }
            let landed = setup.library.appendingPathComponent("Live/IMG_0001.MOV")
            #expect(try F.read(landed) == theirs, "the other program's file stays where it put it")
            #expect(!FileManager.default.fileExists(atPath: setup.library.appendingPathComponent("IMG_0001.HEIC").path),
                    "lfsync's own file of the asset went back")
            let staged = try F.contents(of: setup.stagingURL).map { try F.read(setup.stagingURL.appendingPathComponent($0)) }
            #expect(!staged.contains(theirs), "nothing of theirs was moved into staging")
            #expect(staged.contains(still))
            // What the importer does next with an asset that failed: discard its staged files.
            try stillStaged.discard()
            try videoStaged.discard()
            #expect(try F.read(landed) == theirs)
        }
    }

    @Test func aStagedFileCutShortIsNotInstalled() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            let bytes = F.data(4000, seed: 38)
            let staged = try F.stage(bytes, F.manifest(bytes, chunkLengths: [4000]), in: setup.staging)
            let stagedURL = setup.stagingURL.appendingPathComponent(staged.name)
            #expect(truncate(stagedURL.path, 1000) == 0)
            #expect(throws: ReceiveError.stagedFileMissing(fileHash: staged.fileHash)) {
                try setup.installer.install([(staged, try F.path("IMG_0101.HEIC"))])
            }
            #expect(F.contents(of: setup.library) == [".lfsync"])
            #expect(F.contents(of: setup.stagingURL) == [staged.name])
        }
    }

    @Test func sameContentAlreadyThereIsNotInstalledTwice() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            let bytes = F.data(4000, seed: 31)
            let existing = setup.library.appendingPathComponent("IMG_0001.HEIC")
            try F.write(bytes, to: existing)
            let before = try F.status(existing)
            let staged = try F.stage(bytes, F.manifest(bytes, chunkLengths: [1000, 3000]), in: setup.staging)

            let path = try F.path("IMG_0001.HEIC")
            #expect(try setup.installer.install([(staged, path)]) == [.alreadyPresent(path)])
            #expect(try F.status(existing) == before, "the existing file was not touched")
            #expect(F.contents(of: setup.library) == [".lfsync", "IMG_0001.HEIC"])
            #expect(F.contents(of: setup.stagingURL).isEmpty, "the redundant staged copy was dropped")
        }
    }

    @Test func differentContentIsStoredBesideUnderAConflictName() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            let original = F.data(4000, seed: 32)
            let existing = setup.library.appendingPathComponent("DCIM/IMG_0001.HEIC")
            try F.write(original, to: existing)
            let incoming = F.data(5000, seed: 33)
            let manifest = F.manifest(incoming, chunkLengths: [5000])
            let path = try F.path("DCIM/IMG_0001.HEIC")
            let conflict = try F.path("DCIM/IMG_0001 (conflict \(manifest.fileHash.hex.prefix(8))).HEIC")

            let first = try F.stage(incoming, manifest, in: setup.staging)
            #expect(try setup.installer.install([(first, path)]) == [.conflictRenamed(original: path, storedAs: conflict)])
            #expect(try F.read(existing) == original)
            #expect(try F.read(setup.library.appendingPathComponent(conflict.string)) == incoming)

            // The same conflicting file again: recognised, not piled up.
            let second = try F.stage(incoming, manifest, in: setup.staging)
            #expect(try setup.installer.install([(second, path)]) == [.alreadyPresent(conflict)])
            #expect(F.contents(of: setup.library.appendingPathComponent("DCIM")) == ["IMG_0001 (conflict \(manifest.fileHash.hex.prefix(8))).HEIC", "IMG_0001.HEIC"])
            #expect(try F.read(existing) == original)
            #expect(F.contents(of: setup.stagingURL).isEmpty)
        }
    }

    @Test func occupiedConflictNameFallsBackToTheFullHash() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            let incoming = F.data(100, seed: 34)
            let manifest = F.manifest(incoming, chunkLengths: [100])
            let short = "a (conflict \(manifest.fileHash.hex.prefix(8))).jpg"
            try F.write([1], to: setup.library.appendingPathComponent("a.jpg"))
            try F.write([2], to: setup.library.appendingPathComponent(short))
            let staged = try F.stage(incoming, manifest, in: setup.staging)
            let results = try setup.installer.install([(staged, try F.path("a.jpg"))])
            let full = try F.path("a (conflict \(manifest.fileHash.hex)).jpg")
            #expect(results == [.conflictRenamed(original: try F.path("a.jpg"), storedAs: full)])
            #expect(try F.read(setup.library.appendingPathComponent(short)) == [2])

            try F.write([3], to: setup.library.appendingPathComponent("b.jpg"))
            try F.write([3], to: setup.library.appendingPathComponent("b (conflict \(manifest.fileHash.hex.prefix(8))).jpg"))
            try F.write([3], to: setup.library.appendingPathComponent("b (conflict \(manifest.fileHash.hex)).jpg"))
            let again = try F.stage(incoming, manifest, in: setup.staging)
            #expect(throws: ReceiveError.destinationOccupied("b.jpg")) { try setup.installer.install([(again, try F.path("b.jpg"))]) }
        }
    }

    @Test func aDirectoryAtTheNameIsAConflictToo() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            try FileManager.default.createDirectory(at: setup.library.appendingPathComponent("x.jpg"), withIntermediateDirectories: true)
            let incoming = F.data(100, seed: 35)
            let manifest = F.manifest(incoming, chunkLengths: [100])
            let staged = try F.stage(incoming, manifest, in: setup.staging)
            let result = try setup.installer.install([(staged, try F.path("x.jpg"))])
            #expect(result == [.conflictRenamed(original: try F.path("x.jpg"), storedAs: try F.path("x (conflict \(manifest.fileHash.hex.prefix(8))).jpg"))])
        }
    }

    @Test func failedAssetIsRolledBackWhole() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            let still = F.data(3000, seed: 36)
            let video = F.data(7000, seed: 37)
            let stillStaged = try F.stage(still, F.manifest(still, chunkLengths: [3000]), in: setup.staging)
            let videoStaged = try F.stage(video, F.manifest(video, chunkLengths: [3000, 4000]), in: setup.staging)
            // A plain file where the video's directory must go.
            try F.write([0], to: setup.library.appendingPathComponent("Live"))
            let asset = [
                (stillStaged, try F.path("New Album/2024/IMG_0001.HEIC")),
                (videoStaged, try F.path("Live/IMG_0001.MOV")),
            ]
            #expect(throws: ReceiveError.notADirectory("Live")) { try setup.installer.install(asset) }
            #expect(F.contents(of: setup.library) == [".lfsync", "Live"], "the still and its new directories are gone again")
            #expect(F.contents(of: setup.stagingURL).count == 2, "both files are staged again")

            // Same StagedFiles, blocker removed: the asset lands whole.
            try FileManager.default.removeItem(at: setup.library.appendingPathComponent("Live"))
            #expect(try setup.installer.install(asset) == asset.map { .installed($0.1) })
            #expect(try F.read(setup.library.appendingPathComponent("New Album/2024/IMG_0001.HEIC")) == still)
            #expect(try F.read(setup.library.appendingPathComponent("Live/IMG_0001.MOV")) == video)
            #expect(F.contents(of: setup.stagingURL).isEmpty)
        }
    }

    @Test func rollbackKeepsPreExistingFilesAndDropsNothingStaged() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            let still = F.data(3000, seed: 38)
            let video = F.data(3000, seed: 39)
            try F.write(still, to: setup.library.appendingPathComponent("IMG_0001.HEIC"))
            let stillStaged = try F.stage(still, F.manifest(still, chunkLengths: [3000]), in: setup.staging)
            let videoStaged = try F.stage(video, F.manifest(video, chunkLengths: [3000]), in: setup.staging)
            try F.symlink(setup.library.appendingPathComponent("evil"), to: setup.outside)
            let asset = [(stillStaged, try F.path("IMG_0001.HEIC")), (videoStaged, try F.path("evil/IMG_0001.MOV"))]
            #expect(throws: ReceiveError.symlinkInPath("evil")) { try setup.installer.install(asset) }
            #expect(try F.read(setup.library.appendingPathComponent("IMG_0001.HEIC")) == still)
            #expect(F.contents(of: setup.stagingURL).count == 2, "the duplicate is dropped only on success")
            #expect(F.contents(of: setup.outside).isEmpty)
        }
    }

    @Test(arguments: NoReplaceRename.Strategy.allCases)
    func everyRenameMechanismRefusesToReplace(_ strategy: NoReplaceRename.Strategy) async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            let installer = LibraryInstaller(staging: setup.staging, strategy: strategy)
            try F.write([42], to: setup.library.appendingPathComponent("a.jpg"))
            let bytes = F.data(100, seed: 40)
            let manifest = F.manifest(bytes, chunkLengths: [100])
            let staged = try F.stage(bytes, manifest, in: setup.staging)
            let results = try installer.install([(staged, try F.path("a.jpg")), (try F.stage(bytes, manifest, in: setup.staging), try F.path("b.jpg"))])
            #expect(results == [
                .conflictRenamed(original: try F.path("a.jpg"), storedAs: try F.path("a (conflict \(manifest.fileHash.hex.prefix(8))).jpg")),
                .installed(try F.path("b.jpg")),
            ])
            #expect(try F.read(setup.library.appendingPathComponent("a.jpg")) == [42])
            #expect(F.contents(of: setup.stagingURL).isEmpty)
            #expect(try F.status(setup.library.appendingPathComponent("b.jpg")).modificationTimeNs == F.mtimeNs)
        }
    }

    @Test func conflictNamesKeepTheExtensionAndTheLengthLimit() throws {
        let hash = Blake2b.hash([1])
        let tag = String(hash.hex.prefix(8))
        #expect(ConflictName.make("IMG_0001.HEIC", tag: "1a2b3c4d") == "IMG_0001 (conflict 1a2b3c4d).HEIC")
        #expect(ConflictName.make("IMG_0001.HEIC.xmp", tag: "1a2b3c4d") == "IMG_0001.HEIC (conflict 1a2b3c4d).xmp")
        #expect(ConflictName.make(".hidden", tag: "1a2b3c4d") == ".hidden (conflict 1a2b3c4d)")
        #expect(ConflictName.make("README", tag: "1a2b3c4d") == "README (conflict 1a2b3c4d)")
        #expect(ConflictName.candidates(for: "a.jpg", tag: hash) == ["a (conflict \(tag)).jpg", "a (conflict \(hash.hex)).jpg"])
        for name in [String(repeating: "ü", count: 127) + ".jpg", String(repeating: "x", count: 255), String(repeating: "🌊", count: 60) + ".heic"] {
            for candidate in ConflictName.candidates(for: name, tag: hash) {
                #expect(candidate.utf8.count <= 255)
                _ = try LibraryPath.validate(candidate)
            }
        }
        #expect(ConflictName.make(String(repeating: "ü", count: 127) + ".jpg", tag: tag).hasSuffix(" (conflict \(tag)).jpg"))
    }
}
