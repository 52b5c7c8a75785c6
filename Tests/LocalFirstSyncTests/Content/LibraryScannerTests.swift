import Foundation
import Synchronization
import Testing
@testable import LFSyncFixtures
@testable import LocalFirstSync
@testable import LFSyncContent
@testable import LFSyncCrypto
@testable import LFSyncStore
@testable import LFSyncSystem

@Suite struct LibraryScannerTests {
    static let identifier = "A1B2C3D4-0000-4000-8000-123456789ABC"

    func scan(_ root: URL, index: LibraryIndex? = nil) async throws -> LibraryScan {
        try await LibraryScanner(root: root, cache: index?.scanCache, chunkIndex: index?.chunkIndex).scan()
    }

    @Test func liveStillAndVideoWithUnrelatedNamesAreOneAsset() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            try TestSupport.write(MediaFixtures.liveStillHEIC(identifier: Self.identifier), to: root.appendingPathComponent("IMG_4711.HEIC"))
            try TestSupport.write(MediaFixtures.liveVideoMOV(identifier: Self.identifier), to: root.appendingPathComponent("holiday clip.mov"))
            let result = try await scan(root)
            #expect(result.assets.count == 1)
            let asset = try #require(result.assets.first)
            #expect(asset.kind == .livePhoto)
            #expect(asset.files.map(\.role) == [.primary, .livePhotoVideo])
            #expect(asset.files.map(\.manifest.path) == ["IMG_4711.HEIC", "holiday clip.mov"])
        }
    }

    /// A file larger than the scanner's read buffer is not parsed from the bytes it hashed
    /// (they were never all in memory at once): its identifier is read from the file again,
    /// whether the metadata sits before the video (`moov` first) or after it, past the buffer.
    @Test func liveVideoLargerThanTheReadBufferStillPairs() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let video = 3 * FileDigester.defaultBufferSize
            for (name, moovFirst) in [("metadata first", true), ("metadata last", false)] {
                let folder = root.appendingPathComponent(name)
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                let mov = MediaFixtures.mov(identifier: Self.identifier,
                                            options: .init(moovFirst: moovFirst, sampleBytes: video))
                #expect(mov.count > FileDigester.defaultBufferSize)
                try TestSupport.write(MediaFixtures.liveStillHEIC(identifier: Self.identifier), to: folder.appendingPathComponent("IMG_4711.HEIC"))
                try TestSupport.write(mov, to: folder.appendingPathComponent("clip.mov"))
            }
            let index = try LibraryIndex.inMemory()
            // The second scan finds the files too new to trust their stamps (3 s) and hashes them again.
            for pass in ["first scan", "second scan"] {
                let result = try await scan(root, index: index)
                #expect(result.assets.count == 2, "\(pass)")
                for asset in result.assets {
                    #expect(asset.kind == .livePhoto, "\(pass): \(asset.files.map(\.manifest.path))")
                    #expect(asset.files.map(\.role) == [.primary, .livePhotoVideo], "\(pass)")
                }
            }
        }
    }

    @Test func sameBasenameWithoutMetadataPairs() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            try TestSupport.write(Array("not really a heic".utf8), to: root.appendingPathComponent("IMG_0001.HEIC"))
            try TestSupport.write(Array("not really a movie".utf8), to: root.appendingPathComponent("IMG_0001.MOV"))
            let result = try await scan(root)
            #expect(result.assets.count == 1)
            #expect(result.assets.first?.files.map(\.role) == [.primary, .livePhotoVideo])
        }
    }

    @Test func corruptMediaScansAsSingleAssets() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let heic = MediaFixtures.liveStillHEIC(identifier: Self.identifier)
            let mov = MediaFixtures.liveVideoMOV(identifier: Self.identifier)
            var flipped = heic
            for index in stride(from: 0, to: flipped.count, by: 7) { flipped[index] ^= 0xFF }
            try TestSupport.write(Array(heic.prefix(heic.count / 3)), to: root.appendingPathComponent("cut.heic"))
            try TestSupport.write(flipped, to: root.appendingPathComponent("flipped.HEIC"))
            try TestSupport.write(Array(mov.prefix(40)), to: root.appendingPathComponent("short.mov"))
            try TestSupport.write([0xFF, 0xD8, 0xFF, 0xE1, 0xFF, 0xFF], to: root.appendingPathComponent("lying.jpg"))
            let result = try await scan(root)
            #expect(result.assets.count == 4)
            #expect(result.assets.allSatisfy { $0.files.count == 1 && $0.files[0].role == .primary })
        }
    }

    /// Renaming every file (and folder) must leave every content ID as it was.
    @Test func renamingEverythingKeepsContentIDs() async throws {
        try await TestSupport.withTemporaryDirectory { base in
            let original = base.appendingPathComponent("library")
            try SampleLibrary.write(at: original, options: .init(photoPadding: 20_000))
            let before = try await scan(original)
            // Give every stem a new name (files sharing a stem keep sharing one) and flatten folders differently.
            let renamed = base.appendingPathComponent("moved/elsewhere")
            var stems: [String: String] = [:]
            for asset in before.assets {
                for file in asset.files {
                    let url = URL(fileURLWithPath: file.manifest.path.string)
                    let name = url.lastPathComponent
                    let stem = String(name.prefix(while: { $0 != "." }))
                    let key = url.deletingLastPathComponent().path + "/" + stem.lowercased()
                    let newStem = stems[key] ?? "renamed-\(stems.count)"
                    stems[key] = newStem
                    let newPath = "new-\(url.deletingLastPathComponent().path.replacingOccurrences(of: "/", with: "_"))/\(newStem)\(name.dropFirst(stem.count))"
                    let destination = renamed.appendingPathComponent(newPath)
                    try FileManager.default.createDirectory(at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
                    try FileManager.default.copyItem(at: original.appendingPathComponent(file.manifest.path.string), to: destination)
                }
            }
            let after = try await scan(renamed)
            #expect(before.assets.count > 10)
            #expect(Set(before.assets.map(\.contentID)) == Set(after.assets.map(\.contentID)))
            #expect(Set(before.assets.map(\.files.count)) == Set(after.assets.map(\.files.count)))
        }
    }

    @Test func sampleLibraryGroupsAsDesigned() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            try SampleLibrary.write(at: root, options: .init(photoPadding: 5_000))
            let result = try await scan(root)
            let byPrimary = Dictionary(uniqueKeysWithValues: result.assets.map { ($0.files[0].manifest.path, $0) })
            #expect(byPrimary["DCIM/100APPLE/IMG_0005.HEIC"]?.files.map(\.manifest.path) == ["DCIM/100APPLE/IMG_0005.HEIC", "DCIM/100APPLE/motion-clip-from-phone.mov"])
            #expect(byPrimary["DCIM/100APPLE/IMG_0006.JPG"]?.files.map(\.role) == [.primary, .livePhotoVideo, .sidecar])
            #expect(byPrimary["Camera/DSC_0100.JPG"]?.kind == .rawPlusJPEG)
            #expect(byPrimary["Camera/DSC_0100.JPG"]?.files.map(\.role) == [.primary, .raw, .sidecar])
            #expect(byPrimary["DCIM/100APPLE/IMG_0007.HEIC"]?.files.count == 1)
            #expect(result.skipped.map(\.path) == ["Documents/outside-link"])
            #expect(result.assets.filter { $0.kind == .livePhoto }.count == 6)
        }
    }

    @Test func rescanReadsNothingAndNoticesChanges() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let library = root.appendingPathComponent("library")
            try SampleLibrary.write(at: library, options: .init(photoPadding: 5_000))
            try await TestSupport.waitForFilesToSettle()
            let index = try LibraryIndex.open(at: root.appendingPathComponent("index.sqlite"))
            let first = try await scan(library, index: index)
            #expect(first.statistics.filesFromCache == 0)
            let second = try await scan(library, index: index)
            #expect(second.statistics.filesHashed == 0)
            #expect(second.statistics.filesFromCache == first.statistics.files)
            #expect(second.assets == first.assets)
            // Live Photo pairing must survive the cache: identifiers are cached too.
            #expect(second.assets.filter { $0.kind == .livePhoto }.count == 6)

            // One file edited, one deleted: only the edited one is read again.
            let edited = library.appendingPathComponent("Documents/notes.txt")
            try Data("Buy more film.\n".utf8).write(to: edited)
            try FileManager.default.removeItem(at: library.appendingPathComponent("Documents/recipes.pdf"))
            let third = try await scan(library, index: index)
            #expect(third.statistics.filesHashed == 1)
            #expect(third.statistics.files == first.statistics.files - 1)
            #expect(try index.chunkIndex.indexedFiles()["Documents/recipes.pdf"] == nil)
            let notes = try #require(third.assets.first { $0.files[0].manifest.path == "Documents/notes.txt" })
            #expect(notes.files[0].manifest.fileHash == SpecHashes.file(Array("Buy more film.\n".utf8)))
            let chunk = notes.files[0].manifest.chunks[0]
            #expect(try index.chunkIndex.locations(of: chunk.hash).map(\.path) == ["Documents/notes.txt"])

            // Edited moments before it was hashed: a write in the same clock tick would not have
            // moved its times, so its stamp vouches for nothing yet and it is hashed again.
            #expect(third.settledStatus["Documents/notes.txt"] == nil)
            #expect(third.settledStatus.count == third.statistics.files - 1)
            let fourth = try await scan(library, index: index)
            #expect(fourth.statistics.filesHashed == 1)
        }
    }

    /// `touch -r` / `exiftool -P`: new bytes, same size, the old mtime put back. Only the
    /// ctime shows it, and the scan must hash the file again rather than trust its cache.
    @Test func editKeepingSizeAndMtimeIsNoticedByItsCtime() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let library = root.appendingPathComponent("library")
            let photo = library.appendingPathComponent("IMG_0001.JPG")
            try TestSupport.write(Array(repeating: 1, count: 100_000), to: photo)
            try await TestSupport.waitForFilesToSettle()
            let index = try LibraryIndex.open(at: root.appendingPathComponent("index.sqlite"))
            let first = try await scan(library, index: index)
            #expect(first.settledStatus.paths == ["IMG_0001.JPG"])
            let edited = [UInt8](repeating: 2, count: 100_000)
            try TestSupport.overwriteKeepingMtime(photo, with: edited)
            let second = try await scan(library, index: index)
            #expect(second.statistics.filesHashed == 1)
            #expect(second.assets.first?.files[0].manifest.fileHash == SpecHashes.file(edited))
            #expect(second.assets.first?.files[0].manifest.modificationTimeNs == first.assets.first?.files[0].manifest.modificationTimeNs)
        }
    }

    @Test func neverLeavesTheLibraryOrScansItsOwnState() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let library = root.appendingPathComponent("library")
            let outside = root.appendingPathComponent("outside")
            try TestSupport.write(Array("secret".utf8), to: outside.appendingPathComponent("secret.txt"))
            try TestSupport.write(Array("photo".utf8), to: library.appendingPathComponent("a.jpg"))
            try TestSupport.write(Array("staging".utf8), to: library.appendingPathComponent(".lfsync/staging/partial"))
            try TestSupport.write(Array("hidden but mine".utf8), to: library.appendingPathComponent("sub/.lfsync/kept.txt"))
            try FileManager.default.createSymbolicLink(atPath: library.appendingPathComponent("linked-dir").path, withDestinationPath: outside.path)
            try FileManager.default.createSymbolicLink(atPath: library.appendingPathComponent("linked-file.jpg").path, withDestinationPath: outside.appendingPathComponent("secret.txt").path)
            #expect(mkfifo(library.appendingPathComponent("pipe.heic").path, 0o600) == 0)
            // The built-in defaults leave out a `.lfsync` folder at any depth, and say so...
            let result = try await scan(library)
            let paths = result.assets.flatMap { $0.files.map(\.manifest.path) }
            #expect(paths.sorted() == ["a.jpg"])
            #expect(result.excluded == ["sub/.lfsync/"])
            #expect(result.skipped.map(\.path) == ["linked-dir", "linked-file.jpg", "pipe.heic"])
            // ...while without them a nested one is the user's; only the library's own is never walked or listed.
            let everything = try await LibraryScanner(root: library, exclusions: .none).scan()
            #expect(everything.assets.flatMap { $0.files.map(\.manifest.path) }.sorted() == ["a.jpg", "sub/.lfsync/kept.txt"])
            #expect(everything.excluded.isEmpty)
            #expect(everything.skipped.map(\.path) == ["linked-dir", "linked-file.jpg", "pipe.heic"])
        }
    }

    @Test func reportsPreparationProgress() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            try SampleLibrary.write(at: root, options: .init(photoPadding: 5_000))
            let seen = Mutex<[ScanProgress]>([])
            let result = try await LibraryScanner(root: root).scan { progress in seen.withLock { $0.append(progress) } }
            let updates = seen.withLock { $0 }
            #expect(updates.first?.phase == .walking)
            #expect(updates.last?.phase == .finished)
            #expect(updates.last?.filesDone == result.statistics.files)
            let hashing = updates.filter { $0.phase == .hashing }
            #expect(hashing.count == result.statistics.files + 1)
            #expect(hashing.last?.bytesHashed == hashing.last?.bytesToHash)
        }
    }

    @Test func missingLibraryIsATypedError() async {
        await #expect(throws: LibraryScanner.Failure.self) {
            try await LibraryScanner(root: URL(fileURLWithPath: "/nonexistent/library")).scan()
        }
    }

    @Test func fileManifestsMatchDirectHashing() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            var generator = SplitMix64(seed: 99)
            let data = generator.bytes(3_000_000)
            try TestSupport.write(data, to: root.appendingPathComponent("big.bin"))
            let result = try await scan(root)
            let manifest = try #require(result.assets.first?.files.first?.manifest)
            #expect(manifest.fileHash == SpecHashes.file(data))
            #expect(manifest.chunks.map { Int($0.length) } == FastCDC.chunkLengths(of: data))
            #expect(manifest.size == 3_000_000)
            // The encoding round-trips and a corrupted one is rejected.
            #expect(try FileManifest(encoded: manifest.encoded()) == manifest)
            var bad = manifest.encoded()
            bad[bad.count - 34] ^= 0x01  // the last chunk's length: the lengths no longer add up
            #expect(throws: ByteReaderError.self) { try FileManifest(encoded: bad) }
        }
    }
}
