/// The bytes of one chunk as they travel: raw, or zstd-compressed when that
/// actually pays off. Either way the receiver knows the decoded length up
/// front and verifies the chunk's BLAKE2b hash after decoding.
package enum ChunkPayload: Hashable, Sendable {
    /// A slice, so a received chunk's bytes can stay where they were decrypted,
    /// inside their frame's buffer, instead of being copied out of it.
    case raw(ArraySlice<UInt8>)
    /// One zstd frame that must decompress to exactly `decodedLength` bytes.
    case zstd(compressed: [UInt8], decodedLength: Int)

    package static func raw(_ bytes: [UInt8]) -> ChunkPayload { .raw(bytes[...]) }

    /// Wire value of the encoding byte.
    package var encodingByte: UInt8 {
        switch self {
        case .raw: 0
        case .zstd: 1
        }
    }

    package var decodedLength: Int {
        switch self {
        case let .raw(bytes): bytes.count
        case let .zstd(_, length): length
        }
    }

    /// The bytes on the wire: the raw chunk, or its compressed form.
    package var data: ArraySlice<UInt8> {
        switch self {
        case let .raw(bytes): bytes
        case let .zstd(compressed, _): compressed[...]
        }
    }

    /// Bytes of chunk data on the wire.
    package var encodedLength: Int {
        switch self {
        case let .raw(bytes): bytes.count
        case let .zstd(compressed, _): compressed.count
        }
    }

    /// Compression is kept only if it saves at least 1/16 of the chunk (and at
    /// least 64 bytes): below that, the receiver's decompression costs more
    /// time than the bytes saved. Photos and videos are already compressed
    /// and are almost always sent raw.
    package static func maximumUsefulCompressedLength(forRawLength length: Int) -> Int {
        length - max(length / 16, 64)
    }

    /// Raw or zstd, whichever is meaningfully smaller (see `maximumUsefulCompressedLength`).
    /// Only use when the peer announced `WireCapabilities.zstd`.
    package static func encode(raw: [UInt8], using compressor: borrowing ZstdCompressor) -> ChunkPayload {
        let limit = maximumUsefulCompressedLength(forRawLength: raw.count)
        guard limit > 0, let compressed = compressor.compress(raw, maxOutputLength: limit) else { return .raw(raw) }
        return .zstd(compressed: compressed, decodedLength: raw.count)
    }

    /// As `encode(raw:using:)` with a one-off compressor (convenient, but
    /// a sending loop should reuse a `ZstdCompressor`).
    package static func encode(raw: [UInt8]) -> ChunkPayload {
        let compressor = ZstdCompressor()
        return encode(raw: raw, using: compressor)
    }

    /// The chunk's bytes; decompression never produces more than `decodedLength`.
    package func decoded(using decompressor: borrowing ZstdDecompressor) throws(WireError) -> ArraySlice<UInt8> {
        switch self {
        case let .raw(bytes): bytes
        case let .zstd(compressed, length): try decompressor.decompress(compressed, declaredLength: length)[...]
        }
    }

    package func decoded() throws(WireError) -> ArraySlice<UInt8> {
        if case let .raw(bytes) = self { return bytes }
        let decompressor = ZstdDecompressor()
        return try decoded(using: decompressor)
    }
}
