import Foundation
import Testing
@testable import LFSyncContent
@testable import LFSyncCrypto
@testable import LFSyncSystem

/// PROTOCOL.md's content-hash vectors (`Vectors/content-hashes.json`): lfsync's code and an
/// independent Python implementation of the specification must both give every value.
@Suite struct ContentHashVectorTests {
    static let vectorsURL = TestSupport.vectorsDirectory.appendingPathComponent("content-hashes.json")

    static func vectors() throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: vectorsURL)) as? [String: Any])
    }

    @Test func theCodeGivesEveryVector() throws {
        let vectors = try Self.vectors()
        let keys = try #require(vectors["keys"] as? [String: String])
        #expect(keys == ["chunk": "lfsync/3 chunk", "file": "lfsync/3 file", "content": "lfsync/3 content"])
        #expect(ContentHash.chunkKey == Array("lfsync/3 chunk".utf8) && ContentHash.fileKey == Array("lfsync/3 file".utf8)
                && ContentHash.contentKey == Array("lfsync/3 content".utf8))
        let hello = Array("hello".utf8)
        #expect(vectors["helloChunkHash"] as? String == ContentHash.chunk(hello).hex)
        #expect(vectors["helloFileHash"] as? String == FileManifest(path: "h", contents: hello).fileHash.hex)
        #expect(vectors["emptyFileHash"] as? String == FileManifest(path: "e", contents: []).fileHash.hex)

        let splitmix = try #require(vectors["splitmix"] as? [String: Any])
        var generator = SplitMix64(seed: try #require(splitmix["seed"] as? UInt64))
        let bytes = generator.bytes(try #require(splitmix["length"] as? Int))
        let manifest = FileManifest(path: "splitmix.bin", contents: bytes)
        let chunks = try #require(splitmix["chunks"] as? [[String: Any]])
        #expect(chunks.count == manifest.chunks.count)
        for (expected, chunk) in zip(chunks, manifest.chunks) {
            #expect(expected["length"] as? Int == Int(chunk.length))
            #expect(expected["hash"] as? String == chunk.hash.hex)
        }
        #expect(splitmix["fileHash"] as? String == manifest.fileHash.hex)

        let livePhoto = try #require(vectors["livePhoto"] as? [String: String])
        let files: [(role: FileRole, fileHash: Hash256)] = [
            (.primary, FileManifest(path: "s", contents: Array(try #require(livePhoto["stillText"]).utf8)).fileHash),
            (.livePhotoVideo, FileManifest(path: "v", contents: Array(try #require(livePhoto["videoText"]).utf8)).fileHash),
        ]
        #expect(livePhoto["encodingHex"] == ContentID.canonicalEncoding(of: files).map { String(format: "%02x", $0) }.joined())
        #expect(livePhoto["contentID"] == ContentID(files: files).hex)
    }

    /// The 8 MiB vector's values are in PROTOCOL.md itself (an implementer needs nothing from
    /// this repository's tests): its cut points and hashes there are the files' and the code's.
    @Test func theDocumentPrintsTheEightMiBVector() throws {
        let cutsText = try #require(try ProtocolDocumentTests.examples(kind: "text")["fastcdc-cut-points"])
        let printedCuts = cutsText.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        let splitmix = try #require(try Self.vectors()["splitmix"] as? [String: Any])
        var generator = SplitMix64(seed: try #require(splitmix["seed"] as? UInt64))
        let bytes = generator.bytes(try #require(splitmix["length"] as? Int))
        let manifest = FileManifest(path: "splitmix.bin", contents: bytes)
        var end = 0
        #expect(printedCuts == manifest.chunks.map { chunk -> Int in end += Int(chunk.length); return end })
        #expect(printedCuts.count == 30)
        let hashes = try #require(try ProtocolDocumentTests.examples(kind: "text")["splitmix-first-last-chunk-hash"])
            .split(whereSeparator: \.isWhitespace).map(String.init)
        #expect(hashes == [manifest.chunks.first?.hash.hex, manifest.chunks.last?.hash.hex].compactMap { $0 })
        let fileHash = try #require(try ProtocolDocumentTests.examples(kind: "text")["splitmix-file-hash"])
        #expect(fileHash.trimmingCharacters(in: .whitespacesAndNewlines) == manifest.fileHash.hex)
        #expect(splitmix["fileHash"] as? String == manifest.fileHash.hex)
    }

    static let python: String? = ["/usr/bin/python3", "/usr/local/bin/python3"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// The Python reference, written from PROTOCOL.md with `hashlib` alone, gives the same
    /// values: the specification is enough to reproduce every hash.
    @Test(.enabled(if: python != nil, "no python3 on this machine to run the reference implementation"))
    func theSpecificationAloneReproducesEveryVector() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(Self.python))
        process.arguments = ["content_hashes_reference.py"]
        process.currentDirectoryURL = TestSupport.vectorsDirectory
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let reference = try #require(try JSONSerialization.jsonObject(with: printed) as? NSDictionary)
        #expect(reference == (try Self.vectors()) as NSDictionary)
    }

    /// libsodium and libcrypto compute keyed BLAKE2b identically, for every length around
    /// BLAKE2b's 128-byte block and for input fed in pieces: lfsync may use either.
    @Test func bothBlake2bLibrariesAgree() {
        var generator = SplitMix64(seed: 7)
        let data = generator.bytes(300_000)
        for length in [0, 1, 63, 64, 127, 128, 129, 255, 256, 257, 4096, 65_537, 300_000] {
            let input = Array(data.prefix(length))
            let sodium = KeyedBlake2b.hash(input, key: ContentHash.chunkKey, implementation: .libsodium)
            let crypto = KeyedBlake2b.hash(input, key: ContentHash.chunkKey, implementation: .libcrypto)
            #expect(sodium == crypto, "length \(length)")
            #expect(sodium == SpecHashes.chunk(input), "length \(length)")
        }
        for implementation in Blake2bImplementation.allCases {
            var hasher = KeyedBlake2b(key: ContentHash.fileKey, implementation: implementation)
            for round in 0..<3 {
                var offset = 0, step = 1
                while offset < data.count {
                    let end = min(data.count, offset + step)
                    data[offset..<end].withUnsafeBytes { hasher.update($0) }
                    (offset, step) = (end, step * 2 + 1)
                }
                #expect(hasher.finalizeAndReset() == SpecHashes.blake2b(data, key: "lfsync/3 file"), "\(implementation), round \(round)")
            }
        }
    }

    /// A manifest's file hash is its chunk list's, whatever way it was made: changing a chunk
    /// changes it, and it cannot be set apart from the chunks.
    @Test func aFileHashIsMadeFromTheChunkList() {
        let bytes = Array("the same bytes, cut twice".utf8)
        var manifest = FileManifest(path: "a", contents: bytes)
        #expect(manifest.fileHash == SpecHashes.file(bytes))
        let whole = manifest.fileHash
        manifest.chunks = [ChunkRef(length: 10, hash: ContentHash.chunk(bytes[0..<10])),
                           ChunkRef(length: 15, hash: ContentHash.chunk(bytes[10...]))]
        #expect(manifest.fileHash != whole, "another cut is another file hash")
        #expect(manifest.fileHash == SpecHashes.file(chunks: [(10, ContentHash.chunk(bytes[0..<10])), (15, ContentHash.chunk(bytes[10...]))]))
    }
}
