@testable import LocalFirstSync
@testable import LFSyncContent
@testable import LFSyncCrypto
@testable import LFSyncWire

/// Deterministic sample messages of every type, shared by the codec, document and fuzz tests.
enum WireFixtures {
    static func hash(_ label: String) -> Hash256 {
        Blake2b.hash(Array(label.utf8))
    }

    static func manifest(path: String, chunkLengths: [UInt32], seed: String) -> FileManifest {
        let chunks = chunkLengths.enumerated().map { index, length in
            ChunkRef(length: length, hash: hash("\(seed)/chunk/\(index)"))
        }
        return FileManifest(
            path: RelativePath(path), size: chunkLengths.reduce(0) { $0 + UInt64($1) },
            modificationTimeNs: 1_700_000_000_123_456_789, chunks: chunks)
    }

    static let livePhoto = Asset(files: [
        .init(role: .livePhotoVideo, manifest: manifest(path: "2024/IMG_0001.MOV", chunkLengths: [300_000, 250_000, 90_000], seed: "mov")),
        .init(role: .primary, manifest: manifest(path: "2024/IMG_0001.HEIC", chunkLengths: [200_000], seed: "heic")),
        .init(role: .sidecar, manifest: manifest(path: "2024/IMG_0001.AAE", chunkLengths: [812], seed: "aae")),
    ])

    static let photo = Asset(files: [
        .init(role: .primary, manifest: manifest(path: "2024/DSC_0002.JPG", chunkLengths: [65_536, 70_000], seed: "jpg")),
    ])

    static let emptyFile = Asset(files: [
        .init(role: .primary, manifest: manifest(path: "notes/empty.txt", chunkLengths: [], seed: "empty")),
    ])

    /// The photo again in a backup folder, with its own mtime: one content, two placements.
    static let photoBackup = Asset(files: [
        .init(role: .primary, manifest: {
            var copy = photo.files[0].manifest
            copy.path = "Backup/2024/DSC_0002.JPG"
            copy.modificationTimeNs = 1_600_000_000_000_000_000
            return copy
        }()),
    ])

    /// Each content with all its placements, as an offer carries it.
    static func placed(_ placements: Asset...) -> PlacedAsset {
        guard let asset = PlacedAsset(placements: placements) else { preconditionFailure("placements of different contents") }
        return asset
    }

    static let compressibleChunk: [UInt8] = Array(String(repeating: "lfsync moves photos between your own devices. ", count: 200).utf8)

    static var zstdChunk: WireMessage.Chunk {
        let payload = ChunkPayload.encode(raw: compressibleChunk)
        return .init(offerID: 42, contentID: livePhoto.contentID, fileIndex: 2, chunkIndex: 0, payload: payload)
    }

    /// The laptop (short ID 0x0A) and the NAS (0x0B): an edit, a deletion, a file known by its hash.
    static var pathStates: [WireMessage.PathStateEntry] {
        [
            .init(seq: 42, path: "2024/DSC_0002.JPG", vector: VersionVector([(0x0A, 2), (0x0B, 1)]), changedAt: 1_765_000_000_000,
                  changedBy: 0x0A, content: .file(photo.files[0].manifest)),
            .init(seq: 43, path: "notes/empty.txt", vector: VersionVector([(0x0A, 3)]), changedAt: 1_765_000_001_000, changedBy: 0x0A,
                  content: .deleted),
            .init(seq: 44, path: "2024/IMG_0001.AAE", vector: VersionVector([(0x0B, 1)]), changedAt: 1_765_000_002_000, changedBy: 0x0B,
                  content: .fileHash(hash("aae file"), size: 812, modificationTimeNs: 1_700_000_000_000_000_000, mode: 0o644)),
        ]
    }

    /// One or more valid messages of every type.
    static var messages: [WireMessage] {
        [
            .hello(.init(deviceName: "Anna's laptop", softwareVersion: "0.1.0", capabilities: .zstd)),
            .hello(.init(deviceName: "nas", softwareVersion: "9.9.9-beta+build.7", capabilities: WireCapabilities(rawValue: 0xFFFF_FFFF))),
            .connectionDecision(.init(accepted: true)),
            .connectionDecision(.init(accepted: false, reason: "Declined by Anna")),
            .offer(.init(offerID: 42, assets: [placed(livePhoto), placed(photo, photoBackup), placed(emptyFile)])),
            .offer(.init(offerID: 43, assets: [])),
            .offer(.init(offerID: 44, push: .init(pushID: 42, isLast: false, fileCount: 9, byteCount: 1_000_000), assets: [placed(photoBackup)])),
            .offerReply(.init(offerID: 42, decision: .accepted, needed: [
                .init(contentID: livePhoto.contentID, files: [
                    .init(fileIndex: 2, chunks: ChunkIndexSet([0, 2])),
                    .init(fileIndex: 0, chunks: .all(count: 1)),
                ]),
                .init(contentID: photo.contentID, files: [.init(fileIndex: 0, chunks: ChunkIndexSet(ranges: [1..<2]))]),
            ])),
            .offerReply(.init(offerID: 43, decision: .refused, reason: "not enough free space: 12 GB needed, 3 GB free")),
            .offerReply(.init(offerID: 44, decision: .declined, reason: "declined by Anna")),
            .chunk(.init(offerID: 42, contentID: photo.contentID, fileIndex: 0, chunkIndex: 1,
                         payload: .raw(Array(repeating: 0xA5, count: 1000)))),
            .chunk(zstdChunk),
            .receipt(.init(offerID: 42, contentID: livePhoto.contentID, outcome: .stored)),
            .receipt(.init(offerID: 42, contentID: photo.contentID, outcome: .failed(reason: "hash mismatch in chunk 1 of DSC_0002.JPG"))),
            .cancel(.init(offerID: 42, reason: "cancelled by the user")),
            .pull(.init(requestID: 7)),
            .fetch(.init(requestID: 8, contents: [livePhoto.contentID, photo.contentID])),
            .holdingCheck(.init(requestID: 9, contents: [livePhoto.contentID, photo.contentID])),
            .holdingCheck(.init(requestID: 10, contents: [photo.contentID], nonces: [Hash256(bytes: [UInt8](repeating: 0x5A, count: 32))!])),
            .holdingReport(.init(requestID: 10, answers: [.heldVerified(verifiedAt: 1_765_000_000_000, proof: Hash256(bytes: [UInt8](repeating: 0x77, count: 32))!)])),
            .holdingReport(.init(requestID: 9, answers: [.notHeld, .heldChanged])),
            .holdingReport(.init(requestID: 11, answers: nil)),
            .chunkRequest(.init(requestID: 12, chunkHash: Hash256(bytes: [UInt8](repeating: 0x33, count: 32))!, length: 65_536)),
            .chunkReply(.init(requestID: 12, outcome: .bytes(Array(repeating: 0x33, count: 100)[...]))),
            .chunkReply(.init(requestID: 13, outcome: .notHeld)),
            .chunkReply(.init(requestID: 14, outcome: .refused)),
            .offer(.init(offerID: 45, push: .init(pushID: 45, isLast: true, fileCount: 1, byteCount: 135_536, syncFollows: true), assets: [placed(photo)])),
            .pathStateRequest(.init(requestID: 15, historyID: 0, since: 0)),
            .pathStateRequest(.init(requestID: 16, historyID: 0x1234_5678_9ABC_DEF0, since: 41, maxEntries: 1)),
            .pathStateReport(.init(requestID: 15, status: .answered, historyID: 0x1234_5678_9ABC_DEF0, through: 44, more: false, entries: pathStates)),
            .pathStateReport(.init(requestID: 16, status: .answered, historyID: 0x1234_5678_9ABC_DEF0, through: 42, more: true,
                                   entries: [pathStates[0]])),
            .pathStateReport(.refused(17)),
            .syncRequest(.init(requestID: 18)),
            .syncRequest(.init(requestID: 19, flags: .deletions, maxDeletions: 100)),
            .syncReply(.init(requestID: 18, status: .synced, counts: {
                var counts = WireMessage.SyncReply.Counts()
                counts.taken = 2
                counts.deleted = 1
                counts.conflicts = 1
                counts.bytesFetched = 65_536
                return counts
            }())),
            .syncReply(.init(requestID: 19, status: .declined, reason: "this device takes syncs only from devices it accepts pushes from unasked")),
            .ping(.init(nonce: 0x0102_0304_0506_0708)),
            .pong(.init(nonce: .max)),
            .error(.init(code: .unexpectedMessage, message: "Offer before the connection was accepted")),
            .error(.init(code: .init(rawValue: 999), message: "")),
        ]
    }
}
