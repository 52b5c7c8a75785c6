import LocalFirstSync
import LFSyncSystem
import LFSyncCrypto
import LFSyncContent
import LFSyncStore
import LFSyncTransport
import LFSyncTCP
import LFSyncDiscovery
import LFSyncWire

/// Byte-level builders for messages lfsync's own encoder would refuse to
/// produce: they write the wire format of PROTOCOL.md directly.
enum HostilePayload {
    static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    static func asset(path: String, bytes: [UInt8]) -> Asset {
        Asset(files: [.init(role: .primary, manifest: FileManifest(path: RelativePath(path), contents: bytes))])
    }

    /// A well-formed manifest for a file nobody has: `chunkCount` chunks of `chunkLength` bytes.
    static func hugeAsset(path: String, chunkCount: Int, chunkLength: UInt32) -> Asset {
        // Distinct chunk hashes, so no deduplication can shrink what the receiver must store.
        let chunks = (0..<chunkCount).map { index -> ChunkRef in
            ChunkRef(length: chunkLength, hash: ContentHash.chunk(withUnsafeBytes(of: UInt64(index).bigEndian) { Array($0) }))
        }
        return Asset(files: [.init(role: .primary, manifest: FileManifest(
            path: RelativePath(path), size: UInt64(chunkCount) * UInt64(chunkLength), modificationTimeNs: 0, chunks: chunks))])
    }

    /// An Offer frame written field by field (PROTOCOL.md, "Offer"), without the
    /// encoder's name checks: a push of this one offer, each asset at one placement.
    static func offerFrame(offerID: UInt64, assets: [Asset]) -> Frame {
        var writer = ByteWriter(capacity: 1024)
        writer.write(offerID)
        writePushHeader(offerID: offerID, into: &writer)
        writer.write(UInt32(assets.count))
        for asset in assets { write(asset, into: &writer) }
        return Frame(type: WireMessageType.offer.rawValue, payload: writer.bytes)
    }

    /// The push header of a push made of one offer: push ID = offer ID, last, counts.
    static func writePushHeader(offerID: UInt64, into writer: inout ByteWriter) {
        writer.write(offerID)
        writer.write(UInt8(1))
        writer.write(UInt64(1))
        writer.write(UInt64(0))
    }

    /// One asset with one placement, encoded without any check of its names.
    static func write(_ asset: Asset, into writer: inout ByteWriter) {
        PlacedAsset(placements: [asset])?.encode(into: &writer)
    }

    /// One zstd frame of 256 MiB of zeros: a few KiB on the wire.
    static func zstdBomb() -> [UInt8] {
        let zeros = [UInt8](repeating: 0, count: 256 << 20)
        let compressor = ZstdCompressor(level: 3)
        return compressor.compress(zeros, maxOutputLength: 1 << 20) ?? []
    }

    /// An Offer that claims `count` assets and carries one asset's worth of bytes.
    static func lyingAssetCountFrame(offerID: UInt64, count: UInt32) -> Frame {
        var writer = ByteWriter(capacity: 256)
        writer.write(offerID)
        writePushHeader(offerID: offerID, into: &writer)
        writer.write(count)
        write(asset(path: "lie.txt", bytes: [1, 2, 3]), into: &writer)
        return Frame(type: WireMessageType.offer.rawValue, payload: writer.bytes)
    }

    /// An Offer with one manifest that claims `count` chunks and carries one.
    static func lyingChunkCountFrame(offerID: UInt64, count: UInt32) -> Frame {
        var writer = ByteWriter(capacity: 256)
        writer.write(offerID)
        writePushHeader(offerID: offerID, into: &writer)
        writer.write(UInt32(1))            // assets
        writer.write(UInt16(1))            // files in the asset
        writer.write(FileRole.primary.rawValue)
        writer.write(UInt64(count) << 16)  // size: count chunks of 64 KiB
        writer.write(count)                // chunk count: the lie
        writer.write(UInt32(1 << 16))
        writer.write(ContentHash.chunk(randomBytes(32)))
        return Frame(type: WireMessageType.offer.rawValue, payload: writer.bytes)
    }
}
