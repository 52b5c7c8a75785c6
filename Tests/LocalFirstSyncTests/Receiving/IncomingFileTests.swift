import Foundation
import Testing
@testable import LFSyncFixtures
@testable import LocalFirstSync
@testable import LFSyncContent
@testable import LFSyncCrypto
@testable import LFSyncStore
@testable import LFSyncLanding

@Suite("Receiving: incoming files")
struct IncomingFileTests {
    typealias F = ReceivingFixtures

    @Test func chunksOutOfOrderMakeTheExactFileWithItsMtime() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            let bytes = F.data(10_000, seed: 10)
            let manifest = F.manifest(bytes, chunkLengths: [3000, 1, 4096, 2903])
            let file = try IncomingFile.prepare(in: setup.staging, manifest: manifest)
            #expect(file.presentChunks.count == 0)
            for index in [2, 0, 3, 1] {
                try file.write(chunkAt: index, bytes: F.chunk(index, of: bytes, manifest))
            }
            #expect(file.presentChunks.isComplete)
            let staged = try file.verify()
            #expect(staged.fileHash == manifest.fileHash)
            #expect(staged.size == 10_000)
            // The mtime is a placement's, given when it is installed.
            try staged.prepareForInstall(modificationTimeNs: manifest.modificationTimeNs)

            let path = try F.path("Fotos/2024/IMG_0001.HEIC")
            #expect(try setup.installer.install([(staged, path)]) == [.installed(path)])
            let installed = setup.library.appendingPathComponent("Fotos/2024/IMG_0001.HEIC")
            #expect(try F.read(installed) == bytes)
            #expect(try F.status(installed).modificationTimeNs == F.mtimeNs)
            #expect(F.contents(of: setup.stagingURL).isEmpty, "the staged copy was moved, not copied")
        }
    }

    /// A one-chunk file is staged directly under a private name the clean-up never
    /// touches: one that is dropped unfinished (a failed write, a cancelled offer) must
    /// not stay behind; a larger file's partial stays for a resume.
    @Test func anUnfinishedOneChunkFileLeavesNothingBehind() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            let small = F.data(100, seed: 21)
            do {
                let file = try IncomingFile.prepare(in: setup.staging, manifest: F.manifest(small, chunkLengths: [100]))
                try file.write(chunkAt: 0, bytes: small)
                #expect(try FileManager.default.contentsOfDirectory(atPath: setup.stagingURL.path).count == 1)
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: setup.stagingURL.path).isEmpty)

            let large = F.data(200, seed: 22)
            let manifest = F.manifest(large, chunkLengths: [100, 100])
            do {
                let file = try IncomingFile.prepare(in: setup.staging, manifest: manifest)
                try file.write(chunkAt: 0, bytes: F.chunk(0, of: large, manifest))
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: setup.stagingURL.path) == [manifest.fileHash.hex + ".partial"])
        }
    }

    @Test func mtimeBefore1970IsPreserved() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            let bytes = F.data(10, seed: 11)
            let mtime: Int64 = -1_500_000_001  // 1969-12-31T23:59:58.499999999Z
            let staged = try F.stage(bytes, F.manifest(bytes, chunkLengths: [10], mtimeNs: mtime), in: setup.staging)
            try staged.prepareForInstall(modificationTimeNs: mtime)
            _ = try setup.installer.install([(staged, try F.path("old.jpg"))])
            #expect(try F.status(setup.library.appendingPathComponent("old.jpg")).modificationTimeNs == mtime)
        }
    }

    @Test func emptyFileHasNoChunks() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            let manifest = F.manifest([], chunkLengths: [])
            let file = try IncomingFile.prepare(in: setup.staging, manifest: manifest)
            #expect(file.presentChunks.isComplete)
            let staged = try file.verify()
            _ = try setup.installer.install([(staged, try F.path("empty.txt"))])
            #expect(try F.read(setup.library.appendingPathComponent("empty.txt")).isEmpty)
        }
    }

    @Test func wrongChunksAreRejectedBeforeWriting() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            let bytes = F.data(8192, seed: 12)
            let manifest = F.manifest(bytes, chunkLengths: [4096, 4096])
            var file: IncomingFile? = try IncomingFile.prepare(in: setup.staging, manifest: manifest)
            var forged = F.chunk(1, of: bytes, manifest)
            forged[100] ^= 1
            #expect(throws: ReceiveError.chunkHashMismatch(index: 1)) { try file?.write(chunkAt: 1, bytes: forged) }
            #expect(throws: ReceiveError.chunkHashMismatch(index: 0)) { try file?.write(chunkAt: 0, bytes: F.chunk(1, of: bytes, manifest)) }
            #expect(throws: ReceiveError.chunkLengthMismatch(index: 1, expected: 4096, actual: 4095)) {
                try file?.write(chunkAt: 1, bytes: Array(forged.dropLast()))
            }
            #expect(throws: ReceiveError.chunkIndexOutOfRange(index: 2, chunkCount: 2)) { try file?.write(chunkAt: 2, bytes: []) }
            #expect(throws: ReceiveError.chunkIndexOutOfRange(index: -1, chunkCount: 2)) { try file?.write(chunkAt: -1, bytes: []) }
            #expect(throws: ReceiveError.missingChunks(fileHash: manifest.fileHash, missing: 2)) { _ = try file?.verify() }
            file = nil

            // The partial is made by the first chunk written: none was, so there is none.
            #expect(F.contents(of: setup.stagingURL).isEmpty, "no rejected byte reached the disk")
        }
    }

    @Test func inconsistentManifestsAreRefused() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            var manifest = F.manifest(F.data(100, seed: 13), chunkLengths: [50, 50])
            manifest.size = 99
            #expect(throws: ReceiveError.self) { try IncomingFile.prepare(in: setup.staging, manifest: manifest) }
            manifest.size = 100
            manifest.chunks[0].length = 0
            #expect(throws: ReceiveError.invalidManifest("chunk length 0")) { try IncomingFile.prepare(in: setup.staging, manifest: manifest) }
            #expect(F.contents(of: setup.stagingURL).isEmpty)
        }
    }

    @Test func resumeAfterACrashFindsExactlyTheWrittenChunks() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            // Real FastCDC chunks, large enough that unwritten ones are holes in the sparse partial.
            let bytes = F.data(6 << 20, seed: 14)
            let manifest = F.chunkedManifest(bytes)
            #expect(manifest.chunks.count >= 8)
            let written = Set(manifest.chunks.indices.filter { $0 % 2 == 0 })
            do {
                let file = try IncomingFile.prepare(in: setup.staging, manifest: manifest)
                for index in written.sorted() { try file.write(chunkAt: index, bytes: F.chunk(index, of: bytes, manifest)) }
            }  // dropped without finish: the "crash"

            let resumed = try IncomingFile.prepare(in: setup.staging, manifest: manifest)
            let verified = resumed.presentChunks
            #expect(Set(verified.indices) == written)
            #expect(Set(verified.missingIndices) == Set(manifest.chunks.indices).subtracting(written))
            for index in verified.missingIndices { try resumed.write(chunkAt: index, bytes: F.chunk(index, of: bytes, manifest)) }
            let staged = try resumed.verify()
            _ = try setup.installer.install([(staged, try F.path("VID_0001.MOV"))])
            #expect(try F.read(setup.library.appendingPathComponent("VID_0001.MOV")) == bytes)
        }
    }

    @Test func corruptedPartialChunkIsNotCounted() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            let bytes = F.data(9000, seed: 15)
            let manifest = F.manifest(bytes, chunkLengths: [3000, 3000, 3000])
            do {
                let file = try IncomingFile.prepare(in: setup.staging, manifest: manifest)
                for index in 0..<3 { try file.write(chunkAt: index, bytes: F.chunk(index, of: bytes, manifest)) }
            }
            let partial = setup.stagingURL.appendingPathComponent(manifest.fileHash.hex + ".partial")
            let handle = try FileHandle(forUpdating: partial)
            try handle.seek(toOffset: 4500)
            try handle.write(contentsOf: Data([bytes[4500] ^ 0xFF]))
            try handle.close()

            let resumed = try IncomingFile.prepare(in: setup.staging, manifest: manifest)
            #expect(resumed.presentChunks.indices == [0, 2])
            try resumed.write(chunkAt: 1, bytes: F.chunk(1, of: bytes, manifest))
            _ = try resumed.verify()
        }
    }

    @Test func copiesChunksFromLibraryFilesAndNoticesChanges() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            let bytes = F.data(6000, seed: 16)
            let manifest = F.manifest(bytes, chunkLengths: [2000, 2000, 2000])
            // An older copy in the library holds chunk 1 at offset 500.
            let existing = setup.library.appendingPathComponent("Old Album/copy.heic")
            try F.write(F.data(500, seed: 99) + F.chunk(1, of: bytes, manifest), to: existing)
            let status = try F.status(existing)
            let location = ChunkLocation(path: "Old Album/copy.heic", offset: 500, length: 2000, stamp: FileStamp(status))

            let file = try IncomingFile.prepare(in: setup.staging, manifest: manifest)
            #expect(try file.copyChunk(at: 1, from: .library(location)))
            #expect(try !file.copyChunk(at: 0, from: .library(location)), "chunk 0 has other bytes")
            #expect(try !file.copyChunk(at: 2, from: .library(ChunkLocation(path: "gone.jpg", offset: 0, length: 2000, stamp: location.stamp))))
            var beyondEnd = location
            beyondEnd.offset = 1000
            #expect(try !file.copyChunk(at: 2, from: .library(beyondEnd)))

            // The file changes under us: the same location now holds other bytes. Another content
            // whose first chunk is that chunk no longer finds it there.
            try F.write(F.data(2500, seed: 98), to: existing)
            let otherBytes = F.chunk(1, of: bytes, manifest) + F.data(700, seed: 97)
            let later = try IncomingFile.prepare(in: setup.staging, manifest: F.manifest(otherBytes, chunkLengths: [2000, 700]))
            #expect(try !later.copyChunk(at: 0, from: .library(location)))

            try file.write(chunkAt: 0, bytes: F.chunk(0, of: bytes, manifest))
            try file.write(chunkAt: 2, bytes: F.chunk(2, of: bytes, manifest))
            let staged = try file.verify()
            _ = try setup.installer.install([(staged, try F.path("IMG_0001.HEIC"))])
            #expect(try F.read(setup.library.appendingPathComponent("IMG_0001.HEIC")) == bytes)
        }
    }

    @Test func copiesChunksFromAnotherPartial() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            let shared = F.data(1000, seed: 17)
            let aBytes = shared + F.data(1000, seed: 18)
            let bBytes = F.data(500, seed: 19) + shared
            let a = F.manifest(aBytes, chunkLengths: [1000, 1000], path: "A.HEIC")
            let b = F.manifest(bBytes, chunkLengths: [500, 1000], path: "A.MOV")
            let fileA = try IncomingFile.prepare(in: setup.staging, manifest: a)
            try fileA.write(chunkAt: 0, bytes: shared)

            let fileB = try IncomingFile.prepare(in: setup.staging, manifest: b)
            #expect(try fileB.copyChunk(at: 1, from: .partial(fileHash: a.fileHash, offset: 0, length: 1000)))
            #expect(try !fileB.copyChunk(at: 0, from: .partial(fileHash: a.fileHash, offset: 1000, length: 500)))
            try fileB.write(chunkAt: 0, bytes: Array(bBytes[0..<500]))
            _ = try fileB.verify()
        }
    }

    /// A partial cut short after every chunk landed (something outside lfsync, or a disk that
    /// lost a write) is refused at the finish and deleted: nothing reads it back, but its size
    /// is checked.
    @Test func aPartialCutShortIsRefusedAndDeleted() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            let bytes = F.data(3000, seed: 20)
            let manifest = F.manifest(bytes, chunkLengths: [1000, 2000])
            let file = try IncomingFile.prepare(in: setup.staging, manifest: manifest)
            try file.write(chunkAt: 0, bytes: F.chunk(0, of: bytes, manifest))
            try file.write(chunkAt: 1, bytes: F.chunk(1, of: bytes, manifest))
            let partial = setup.stagingURL.appendingPathComponent(manifest.fileHash.hex + ".partial")
            #expect(truncate(partial.path, 2500) == 0)
            #expect(throws: ReceiveError.stagedFileWrongSize(fileHash: manifest.fileHash, size: 2500, expected: 3000)) { _ = try file.verify() }
            #expect(F.contents(of: setup.stagingURL).isEmpty)
            #expect(throws: ReceiveError.alreadyFinished(fileHash: manifest.fileHash)) { try file.write(chunkAt: 0, bytes: F.chunk(0, of: bytes, manifest)) }
        }
    }

    /// Each received byte is hashed once, as it arrives: a forged chunk is refused before
    /// any of it reaches the disk, and the file lands only with the real one.
    @Test func aForgedChunkIsRefusedBeforeItIsWritten() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            let bytes = F.data(12_000, seed: 30)
            let manifest = F.manifest(bytes, chunkLengths: [4000, 4000, 4000])
            let file = try IncomingFile.prepare(in: setup.staging, manifest: manifest)
            var forged = F.chunk(1, of: bytes, manifest)
            forged[7] ^= 0x80
            #expect(throws: ReceiveError.chunkHashMismatch(index: 1)) { try file.write(chunkAt: 1, bytes: forged) }
            #expect(F.contents(of: setup.stagingURL).isEmpty, "not even a partial was created for it")
            try file.write(chunkAt: 0, bytes: F.chunk(0, of: bytes, manifest))
            #expect(throws: ReceiveError.chunkHashMismatch(index: 1)) { try file.write(chunkAt: 1, bytes: forged) }
            #expect(throws: ReceiveError.chunkLengthMismatch(index: 2, expected: 4000, actual: 3999)) {
                try file.write(chunkAt: 2, bytes: Array(forged.dropLast()))
            }
            let partial = setup.stagingURL.appendingPathComponent(manifest.fileHash.hex + ".partial")
            #expect(try F.read(partial).count == 4000, "only the verified chunk 0 was written")
            #expect(throws: ReceiveError.missingChunks(fileHash: manifest.fileHash, missing: 2)) { _ = try file.verify() }
            try file.write(chunkAt: 1, bytes: F.chunk(1, of: bytes, manifest))
            try file.write(chunkAt: 2, bytes: F.chunk(2, of: bytes, manifest))
            try F.installAndCheck(try file.verify(), bytes, at: "IMG_0001.HEIC", in: setup)
        }
    }

    /// A chunk damaged on disk while a transfer was interrupted (a torn write, a bad sector)
    /// is never trusted: the next transfer re-hashes the partial and asks for it again.
    @Test func aChunkDamagedInAnInterruptedPartialIsFetchedAgain() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            let bytes = F.data(12_000, seed: 31)
            let manifest = F.manifest(bytes, chunkLengths: [4000, 4000, 4000])
            do {
                let interrupted = try IncomingFile.prepare(in: setup.staging, manifest: manifest)
                try interrupted.write(chunkAt: 0, bytes: F.chunk(0, of: bytes, manifest))
                try interrupted.write(chunkAt: 1, bytes: F.chunk(1, of: bytes, manifest))
            }
            let partial = setup.stagingURL.appendingPathComponent(manifest.fileHash.hex + ".partial")
            let handle = try FileHandle(forUpdating: partial)
            try handle.seek(toOffset: 4100)
            handle.write(Data([0xFF, 0x00, 0xFF]))
            try handle.close()
            let resumed = try IncomingFile.prepare(in: setup.staging, manifest: manifest)
            #expect(resumed.presentChunks.indices == [0])
            try resumed.write(chunkAt: 1, bytes: F.chunk(1, of: bytes, manifest))
            try resumed.write(chunkAt: 2, bytes: F.chunk(2, of: bytes, manifest))
            let staged = try resumed.verify()
            _ = try setup.installer.install([(staged, try F.path("resumed.bin"))])
            #expect(try F.read(setup.library.appendingPathComponent("resumed.bin")) == bytes)
        }
    }

    /// Once another transfer has the partial open, a received chunk is checked before it is
    /// written, on both sides: the other transfer may already have verified the bytes there.
    /// That it is shared is lfsync's own record: the file keeps mode 0600 (nothing for vfat,
    /// exFAT, SMB or NFS to drop).
    @Test func receivedChunksOfASharedPartialAreCheckedBeforeWriting() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            let (bytes, manifest) = F.threeChunks(seed: 33)
            let creator = try IncomingFile.prepare(in: setup.staging, manifest: manifest)
            try creator.write(chunkAt: 0, bytes: F.chunk(0, of: bytes, manifest))
            let opener = try IncomingFile.prepare(in: setup.staging, manifest: manifest)
            #expect(opener.presentChunks.indices == [0])
            #expect(try F.status(setup.stagingURL.appendingPathComponent(manifest.fileHash.hex + ".partial")).permissions == 0o600)
            let garbage = F.data(4000, seed: 34)
            #expect(throws: ReceiveError.chunkHashMismatch(index: 1)) { try creator.write(chunkAt: 1, bytes: garbage) }
            #expect(throws: ReceiveError.chunkHashMismatch(index: 2)) { try opener.write(chunkAt: 2, bytes: garbage) }
            try opener.write(chunkAt: 1, bytes: F.chunk(1, of: bytes, manifest))
            try opener.write(chunkAt: 2, bytes: F.chunk(2, of: bytes, manifest))
            let staged = try opener.verify()
            _ = try setup.installer.install([(staged, try F.path("shared.bin"))])
            #expect(try F.read(setup.library.appendingPathComponent("shared.bin")) == bytes)
        }
    }

    /// A file hash is made from the chunk list, so a manifest cannot claim another's: one that
    /// cuts the same bytes differently, or puts other bytes in one chunk, names another partial,
    /// and the honest transfer finishes untouched by it.
    @Test func anotherChunkListIsAnotherFileHashAndAnotherPartial() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            let bytes = F.data(12_000, seed: 99)
            let manifest = F.manifest(bytes, chunkLengths: [4000, 4000, 4000])
            let honest = try IncomingFile.prepare(in: setup.staging, manifest: manifest)
            try honest.write(chunkAt: 0, bytes: F.chunk(0, of: bytes, manifest))
            try honest.write(chunkAt: 1, bytes: F.chunk(1, of: bytes, manifest))
            let garbage = F.data(4000, seed: 1234)
            let recut = F.manifest(bytes, chunkLengths: [8000, 4000], path: "lie")
            let swapped = F.manifest(Array(bytes[0..<8000]) + garbage, chunkLengths: [4000, 4000, 4000], path: "lie")
            for (lie, last) in [(recut, F.chunk(1, of: bytes, recut)), (swapped, garbage)] {
                #expect(lie.fileHash != manifest.fileHash)
                let liar = try IncomingFile.prepare(in: setup.staging, manifest: lie)
                #expect(liar.presentChunks.count == 0, "it did not adopt the honest partial")
                try liar.write(chunkAt: lie.chunks.count - 1, bytes: last)
            }
            try honest.write(chunkAt: 2, bytes: F.chunk(2, of: bytes, manifest))
            try F.installAndCheck(try honest.verify(), bytes, at: "honest.bin", in: setup)
        }
    }

    /// No mode bit is ever changed: an installed file has mode 0600 whether or not the partial was shared.
    @Test func installedFilesHavePlainModeWhetherOrNotThePartialWasShared() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            let bytes = F.data(6000, seed: 5)
            let manifest = F.manifest(bytes, chunkLengths: [3000, 3000])
            let first = try IncomingFile.prepare(in: setup.staging, manifest: manifest)
            try first.write(chunkAt: 0, bytes: F.chunk(0, of: bytes, manifest))
            let second = try IncomingFile.prepare(in: setup.staging, manifest: manifest)  // marks it shared
            try first.write(chunkAt: 1, bytes: F.chunk(1, of: bytes, manifest))
            let staged = try first.verify()
            _ = second
            let path = try F.path("shared.bin")
            #expect(try setup.installer.install([(staged, path)]) == [.installed(path)])
            let installed = setup.library.appendingPathComponent("shared.bin")
            #expect(try F.read(installed) == bytes)
            let mode = try FileManager.default.attributesOfItem(atPath: installed.path)[.posixPermissions] as? Int
            #expect(mode == 0o600)
        }
    }

    @Test func transfersOfTheSameContentShareThePartialSafely() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            let bytes = F.data(6000, seed: 21)
            let manifest = F.manifest(bytes, chunkLengths: [1000, 1000, 1000, 1000, 1000, 1000])
            let first = try IncomingFile.prepare(in: setup.staging, manifest: manifest)
            for index in 0..<3 { try first.write(chunkAt: index, bytes: F.chunk(index, of: bytes, manifest)) }

            let second = try IncomingFile.prepare(in: setup.staging, manifest: manifest)
            #expect(second.presentChunks.indices == [0, 1, 2])
            for index in 3..<6 { try second.write(chunkAt: index, bytes: F.chunk(index, of: bytes, manifest)) }
            let staged = try second.verify()

            // The first may no longer write: the partial it shared is now someone's staged file.
            #expect(throws: ReceiveError.partialTaken(fileHash: manifest.fileHash)) {
                try first.write(chunkAt: 3, bytes: F.chunk(3, of: bytes, manifest))
            }
            try staged.prepareForInstall(modificationTimeNs: manifest.modificationTimeNs)
            let path = try F.path("IMG_0001.HEIC")
            #expect(try setup.installer.install([(staged, path)]) == [.installed(path)])
            let installed = setup.library.appendingPathComponent("IMG_0001.HEIC")
            #expect(try F.status(installed).modificationTimeNs == F.mtimeNs, "no late write touched the installed file")

            // Reopening starts a fresh partial, filled locally from the installed copy.
            let reopened = try IncomingFile.prepare(in: setup.staging, manifest: manifest)
            #expect(reopened.presentChunks.count == 0)
            let stamp = FileStamp(try F.status(installed))
            for index in 0..<6 {
                let location = ChunkLocation(
                    path: "IMG_0001.HEIC", offset: F.offset(ofChunk: index, manifest), length: 1000, stamp: stamp)
                #expect(try reopened.copyChunk(at: index, from: .library(location)))
            }
            let copy = try reopened.verify()
            #expect(try setup.installer.install([(copy, try F.path("Album/IMG_0001.HEIC"))]) == [.installed(try F.path("Album/IMG_0001.HEIC"))])
            #expect(try F.status(installed).inode != F.status(setup.library.appendingPathComponent("Album/IMG_0001.HEIC")).inode)
        }
    }

    /// "<file hash>.<16 hex digits>.staged", each one new: what recovery after a crash
    /// (below) and the clean-up recognise.
    @Test func stagedNamesCarryTheFileHashAndAFreshToken() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            let hash = F.manifest(F.data(100, seed: 3), chunkLengths: [100]).fileHash
            let names = (0..<3).map { _ in setup.staging.stagedName(for: hash) }
            #expect(Set(names).count == 3)
            for name in names {
                let parts = name.split(separator: ".", omittingEmptySubsequences: false)
                #expect(parts.count == 3 && parts[0] == hash.hex[...] && parts[2] == "staged", "\(name)")
                #expect(parts.count == 3 && parts[1].utf8.count == 16 && parts[1].allSatisfy(\.isHexDigit) && parts[1].lowercased() == parts[1])
            }
        }
    }

    @Test func interruptedInstallsAreRecoveredAsCompletePartials() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            let bytes = F.data(5000, seed: 22)
            let manifest = F.manifest(bytes, chunkLengths: [2500, 2500])
            _ = try F.stage(bytes, manifest, in: setup.staging)  // finished, never installed: the "crash"
            #expect(F.contents(of: setup.stagingURL).allSatisfy { $0.hasSuffix(".staged") })

            let restarted = try StagingArea(library: try LibraryDirectory(path: setup.library.path))
            #expect(try restarted.recoverInterruptedFiles() == 1)
            #expect(try restarted.partialFileHashes() == [manifest.fileHash])
            let file = try IncomingFile.prepare(in: restarted, manifest: manifest)
            #expect(file.presentChunks.isComplete)
            _ = try file.verify()
            try restarted.removePartial(fileHash: manifest.fileHash)
        }
    }

    /// A one-chunk file passes through memory whole: its Live Photo identifier is
    /// read there (and counts only at a still or video name), a larger file's is left
    /// to be read from disk.
    @Test func aOneChunkFilesIdentifierIsReadFromItsBytes() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try ReceivingFixtures.setUp(in: root)
            let still = MediaFixtures.liveStillJPEG(identifier: MediaFixtures.identifier)
            let manifest = ReceivingFixtures.manifest(still, chunkLengths: [still.count], path: "IMG_0001.JPG")
            let staged = try ReceivingFixtures.stage(still, manifest, in: setup.staging)
            #expect(staged.embeddedIdentifier == .known(MediaFixtures.identifier))
            #expect(staged.embeddedIdentifier.forFile(atPath: "a/IMG_0001.JPG", readingIfUnknown: "/nonexistent") == MediaFixtures.identifier)
            #expect(staged.embeddedIdentifier.forFile(atPath: "a/IMG_0001.bin", readingIfUnknown: "/nonexistent") == nil)
            #expect(try staged.duplicate().embeddedIdentifier == staged.embeddedIdentifier)

            let bytes = ReceivingFixtures.data(3_000, seed: 4)
            let split = ReceivingFixtures.manifest(bytes, chunkLengths: [1_000, 2_000], path: "IMG_0002.JPG")
            #expect(try ReceivingFixtures.stage(bytes, split, in: setup.staging).embeddedIdentifier == .unknown)
        }
    }
}
