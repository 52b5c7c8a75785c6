import Foundation
import LocalFirstSync
import LFSyncSystem
import LFSyncCrypto
import LFSyncContent
import LFSyncStore
import LFSyncTransport
import LFSyncTCP
import LFSyncDiscovery

/// `lfsync-bench hash-vectors`: PROTOCOL.md's content-hash test vectors, computed by
/// lfsync's own code and printed as JSON. `Tests/.../Vectors/content-hashes.json` is this
/// output; `content_hashes_reference.py` computes the same values from the specification
/// with Python's `hashlib`, and the test suite checks the code and the script against it.
enum HashVectors {
    static let splitMixSeed: UInt64 = 0x6C66_7379_6E63
    static let splitMixLength = 8 << 20

    static func json() throws -> Data {
        let hello = Array("hello".utf8)
        var generator = SplitMix64(seed: splitMixSeed)
        let long = generator.bytes(splitMixLength)
        let longManifest = FileManifest(path: "splitmix.bin", contents: long)
        let still = FileManifest(path: "IMG_0001.HEIC", contents: Array("still".utf8))
        let video = FileManifest(path: "IMG_0001.MOV", contents: Array("video".utf8))
        let livePhoto: [(role: FileRole, fileHash: Hash256)] = [(.primary, still.fileHash), (.livePhotoVideo, video.fileHash)]
        let vectors: [String: Any] = [
            "description": "lfsync content hashes (PROTOCOL.md, Hashes): keyed BLAKE2b-256, one key per use",
            "keys": ["chunk": String(decoding: ContentHash.chunkKey, as: UTF8.self),
                     "file": String(decoding: ContentHash.fileKey, as: UTF8.self),
                     "content": String(decoding: ContentHash.contentKey, as: UTF8.self)],
            "helloChunkHash": ContentHash.chunk(hello).hex,
            "helloFileHash": FileManifest(path: "hello.txt", contents: hello).fileHash.hex,
            "emptyFileHash": FileManifest(path: "empty", contents: []).fileHash.hex,
            "splitmix": [
                "seed": splitMixSeed, "length": splitMixLength,
                "chunks": longManifest.chunks.map { ["length": Int($0.length), "hash": $0.hash.hex] as [String: Any] },
                "fileHash": longManifest.fileHash.hex,
            ] as [String: Any],
            "livePhoto": [
                "stillText": "still", "videoText": "video",
                "encodingHex": ContentID.canonicalEncoding(of: livePhoto).map { String(format: "%02x", $0) }.joined(),
                "contentID": ContentID(files: livePhoto).hex,
            ],
        ]
        return try JSONSerialization.data(withJSONObject: vectors, options: [.prettyPrinted, .sortedKeys])
    }
}
