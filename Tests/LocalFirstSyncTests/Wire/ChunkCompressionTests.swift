internal import CZstd
import Testing
@testable import LocalFirstSync
@testable import LFSyncSystem
@testable import LFSyncWire

@Suite struct ChunkCompressionTests {
    /// A zstd frame made by the streaming API, which records no content size,
    /// so only the bounded output buffer stands between it and our memory.
    static func frameWithoutContentSize(_ input: [UInt8]) -> [UInt8] {
        guard let context = ZSTD_createCCtx() else { return [] }
        defer { ZSTD_freeCCtx(context) }
        _ = ZSTD_CCtx_setParameter(context, ZSTD_c_contentSizeFlag, 0)
        var output = [UInt8](repeating: 0, count: ZSTD_compressBound(input.count))
        var produced = 0
        input.withUnsafeBytes { source in
            output.withUnsafeMutableBytes { destination in
                var inBuffer = ZSTD_inBuffer(src: source.baseAddress, size: source.count, pos: 0)
                var outBuffer = ZSTD_outBuffer(dst: destination.baseAddress, size: destination.count, pos: 0)
                // Streaming without a pledged size leaves the size out of the header.
                while ZSTD_compressStream2(context, &outBuffer, &inBuffer, ZSTD_e_end) != 0 {}
                produced = outBuffer.pos
            }
        }
        return Array(output.prefix(produced))
    }

    @Test func compressibleDataIsCompressed() throws {
        let raw = WireFixtures.compressibleChunk
        let payload = ChunkPayload.encode(raw: raw)
        guard case let .zstd(compressed, length) = payload else { Issue.record("expected zstd"); return }
        #expect(length == raw.count)
        #expect(compressed.count < raw.count / 4)
        #expect(try payload.decoded() == raw[...])
        let decompressor = ZstdDecompressor()
        #expect(try payload.decoded(using: decompressor) == raw[...])
    }

    @Test func incompressibleDataIsSentRaw() {
        var generator = SplitMix64(seed: 21)
        let raw = generator.bytes(256 << 10)
        #expect(ChunkPayload.encode(raw: raw) == .raw(raw))
        #expect(ChunkPayload.encode(raw: [1, 2, 3]) == .raw([1, 2, 3]), "tiny chunks are never worth it")
    }

    @Test func marginalGainIsSentRaw() {
        // Random bytes with a short compressible tail: zstd saves a little, not 1/16.
        var generator = SplitMix64(seed: 22)
        let raw = generator.bytes(60_000) + [UInt8](repeating: 0, count: 2_000)
        #expect(ChunkPayload.encode(raw: raw) == .raw(raw))
    }

    @Test func compressorIsReusable() throws {
        let compressor = ZstdCompressor(level: 3)
        let decompressor = ZstdDecompressor()
        for count in [10, 100, 1_000] {
            let raw = Array(String(repeating: "abc\(count) ", count: count).utf8)
            let payload = ChunkPayload.encode(raw: raw, using: compressor)
            #expect(try payload.decoded(using: decompressor) == raw[...])
        }
    }

    @Test func bombIsRejectedByItsHeader() throws {
        let zeros = [UInt8](repeating: 0, count: 100 << 20)
        let compressor = ZstdCompressor()
        let compressed = compressor.compress(zeros, maxOutputLength: 1 << 20)
        let bomb = try #require(compressed)
        #expect(bomb.count < 64 << 10)
        let payload = ChunkPayload.zstd(compressed: bomb, decodedLength: 1024)
        #expect(throws: WireError.decompressedSizeMismatch(declared: 1024, actual: 100 << 20)) { try payload.decoded() }
        // ... and already when the Chunk message is decoded.
        let message = WireMessage.chunk(.init(offerID: 1, contentID: WireFixtures.photo.contentID, fileIndex: 0, chunkIndex: 0, payload: payload))
        let frame = try message.frame()
        #expect(throws: WireError.decompressedSizeMismatch(declared: 1024, actual: 100 << 20)) { try WireMessage(frame: frame) }
    }

    @Test func bombWithoutContentSizeStopsAtTheDeclaredLength() throws {
        let bomb = Self.frameWithoutContentSize([UInt8](repeating: 0, count: 100 << 20))
        #expect(!bomb.isEmpty && bomb.count < 64 << 10)
        let payload = ChunkPayload.zstd(compressed: bomb, decodedLength: 1024)
        #expect(throws: WireError.decompressedTooLarge(declared: 1024)) { try payload.decoded() }
        let message = WireMessage.chunk(.init(offerID: 1, contentID: WireFixtures.photo.contentID, fileIndex: 0, chunkIndex: 0, payload: payload))
        guard case let .chunk(chunk) = try WireMessage(frame: try message.frame()) else { Issue.record("not a chunk"); return }
        #expect(throws: WireError.decompressedTooLarge(declared: 1024)) { try chunk.payload.decoded() }
    }

    @Test func declaredSizeMismatchIsRejected() throws {
        let raw = WireFixtures.compressibleChunk
        guard case let .zstd(compressed, length) = ChunkPayload.encode(raw: raw) else { Issue.record("expected zstd"); return }
        for declared in [length - 1, length + 1] {
            #expect(throws: WireError.decompressedSizeMismatch(declared: declared, actual: length)) {
                try ChunkPayload.zstd(compressed: compressed, decodedLength: declared).decoded()
            }
        }
        // Without a recorded size, a short result is caught after decompression.
        let unsized = Self.frameWithoutContentSize(raw)
        #expect(throws: WireError.decompressedSizeMismatch(declared: length + 1, actual: length)) {
            try ChunkPayload.zstd(compressed: unsized, decodedLength: length + 1).decoded()
        }
        #expect(try ChunkPayload.zstd(compressed: unsized, decodedLength: length).decoded() == raw[...])
    }

    @Test func garbageAndTrailingDataAreRejected() throws {
        #expect(throws: WireError.self) { try ChunkPayload.zstd(compressed: [1, 2, 3, 4, 5, 6, 7, 8], decodedLength: 10).decoded() }
        guard case let .zstd(compressed, length) = ChunkPayload.encode(raw: WireFixtures.compressibleChunk) else {
            Issue.record("expected zstd"); return
        }
        #expect(throws: WireError.self) { try ChunkPayload.zstd(compressed: compressed + [0], decodedLength: length).decoded() }
        #expect(throws: WireError.self) { try ChunkPayload.zstd(compressed: compressed + compressed, decodedLength: length * 2).decoded() }
        // zstd frames carry no checksum here (the chunk's BLAKE2b is checked
        // later), so corruption either fails or yields exactly `length` bytes.
        var corrupted = compressed
        corrupted[corrupted.count / 2] ^= 0xFF
        if let output = try? ChunkPayload.zstd(compressed: corrupted, decodedLength: length).decoded() {
            #expect(output.count == length)
        }
    }
}
