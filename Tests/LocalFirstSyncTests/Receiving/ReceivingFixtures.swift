import Foundation
import Testing
@testable import LocalFirstSync
@testable import LFSyncContent
@testable import LFSyncCrypto
@testable import LFSyncStore
@testable import LFSyncLanding
@testable import LFSyncSystem

/// Libraries, manifests and file helpers shared by the receiving-side suites.
enum ReceivingFixtures {
    static let mtimeNs: Int64 = 1_700_000_000_123_456_789

    static func data(_ count: Int, seed: UInt64) -> [UInt8] {
        var generator = SplitMix64(seed: seed)
        return generator.bytes(count)
    }

    /// A manifest cut by hand, so tests can use small files and odd chunk lengths.
    static func manifest(
        _ bytes: [UInt8], chunkLengths: [Int], path: String = "IMG_0001.HEIC", mtimeNs: Int64 = mtimeNs
    ) -> FileManifest {
        var chunks: [ChunkRef] = []
        var offset = 0
        for length in chunkLengths {
            chunks.append(ChunkRef(length: UInt32(length), hash: ContentHash.chunk(bytes[offset..<offset + length])))
            offset += length
        }
        precondition(offset == bytes.count, "chunk lengths must cover the bytes")
        return FileManifest(
            path: RelativePath(path), size: UInt64(bytes.count), modificationTimeNs: mtimeNs, chunks: chunks)
    }

    /// 12,000 seeded bytes in three chunks of 4,000, and their manifest.
    static func threeChunks(seed: UInt64) -> (bytes: [UInt8], manifest: FileManifest) {
        let bytes = data(12_000, seed: seed)
        return (bytes, manifest(bytes, chunkLengths: [4000, 4000, 4000]))
    }

    /// A manifest cut by the real chunker (default FastCDC parameters).
    static func chunkedManifest(_ bytes: [UInt8], path: String = "VID_0001.MOV") -> FileManifest {
        FileManifest(path: RelativePath(path), contents: bytes, modificationTimeNs: mtimeNs)
    }

    static func chunk(_ index: Int, of bytes: [UInt8], _ manifest: FileManifest) -> [UInt8] {
        let start = manifest.chunks[..<index].reduce(0) { $0 + Int($1.length) }
        return Array(bytes[start..<start + Int(manifest.chunks[index].length)])
    }

    static func offset(ofChunk index: Int, _ manifest: FileManifest) -> UInt64 {
        manifest.chunks[..<index].reduce(0) { $0 + UInt64($1.length) }
    }

    /// `<root>/library` (with its staging area) beside an empty `<root>/outside`.
    struct Setup {
        let root: URL
        let library: URL
        let outside: URL
        let directory: LibraryDirectory
        let staging: StagingArea
        var installer: LibraryInstaller { LibraryInstaller(staging: staging) }
        var stagingURL: URL { library.appendingPathComponent(".lfsync/staging") }
    }

    static func setUp(in root: URL) throws -> Setup {
        let library = root.appendingPathComponent("library")
        let outside = root.appendingPathComponent("outside")
        try FileManager.default.createDirectory(at: library, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        let directory = try LibraryDirectory(path: library.path)
        return Setup(root: root, library: library, outside: outside, directory: directory, staging: try StagingArea(library: directory))
    }

    /// Receives `bytes` completely (chunks in reverse order), finishes, and readies the staged
    /// file for installing with the manifest's mtime, as the importer does for a placement.
    static func stage(_ bytes: [UInt8], _ manifest: FileManifest, in staging: StagingArea) throws -> StagedFile {
        let file = try IncomingFile.prepare(in: staging, manifest: manifest)
        for index in manifest.chunks.indices.reversed() {
            try file.write(chunkAt: index, bytes: chunk(index, of: bytes, manifest))
        }
        let staged = try file.verify()
        try staged.prepareForInstall(modificationTimeNs: manifest.modificationTimeNs)
        return staged
    }

    /// Installs `staged` at `name` (with the fixtures' mtime, as a placement would give it)
    /// and checks that the library then holds exactly `bytes` there.
    static func installAndCheck(_ staged: StagedFile, _ bytes: [UInt8], at name: String, in setup: Setup) throws {
        try staged.prepareForInstall(modificationTimeNs: mtimeNs)
        let path = try path(name)
        #expect(try LibraryInstaller(staging: staged.staging).install([(staged, path)]) == [.installed(path)])
        #expect(try read(setup.library.appendingPathComponent(name)) == bytes)
    }

    static func write(_ bytes: [UInt8], to url: URL) throws {
        try TestSupport.write(bytes, to: url)
    }

    static func read(_ url: URL) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: url))
    }

    static func contents(of url: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []).sorted()
    }

    static func status(_ url: URL) throws -> FileStatus {
        try FileStatus.of(path: url.path)
    }

    static func symlink(_ url: URL, to destination: URL) throws {
        try FileManager.default.createSymbolicLink(atPath: url.path, withDestinationPath: destination.path)
    }

    static func path(_ text: String) throws -> LibraryPath {
        try LibraryPath.validate(text)
    }
}
