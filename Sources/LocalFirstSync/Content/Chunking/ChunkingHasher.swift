/// Cuts and hashes a byte stream in one pass: FastCDC boundaries, a
/// BLAKE2b-256 per chunk and one over the whole stream. Fed in order, it
/// holds no data of its own, so memory is the caller's read buffer.
public struct ChunkingHasher: ~Copyable {
    private var chunker: FastCDC
    private var fileHasher = Blake2b()
    private var chunkHasher = Blake2b()
    private var chunks: [ChunkRef] = []
    private var totalLength: UInt64 = 0

    public init(configuration: ChunkerConfiguration = .default) {
        chunker = FastCDC(configuration: configuration)
    }

    public mutating func update(_ buffer: UnsafeRawBufferPointer) {
        guard buffer.count > 0 else { return }
        fileHasher.update(buffer)
        totalLength += UInt64(buffer.count)
        var start = 0
        var cuts: [Int] = []
        chunker.scan(buffer) { cuts.append($0) }
        for end in cuts {
            chunkHasher.update(UnsafeRawBufferPointer(rebasing: buffer[start..<end]))
            let length = chunkLengthSoFar + (end - start)
            chunks.append(ChunkRef(length: UInt32(length), hash: chunkHasher.finalizeHashAndReset()))
            chunkLengthSoFar = 0
            start = end
        }
        chunkHasher.update(UnsafeRawBufferPointer(rebasing: buffer[start...]))
        chunkLengthSoFar += buffer.count - start
    }

    private var chunkLengthSoFar = 0

    /// The whole-stream hash and the chunk list. An empty stream has no chunks.
    public consuming func finish() -> (fileHash: Hash256, chunks: [ChunkRef]) {
        finishAndReset()
    }

    /// `finish()`, leaving the hasher ready for the next stream. A scan of
    /// 200,000 files reuses one hasher per worker: each new one allocates two
    /// 64-byte-aligned libsodium states, and a heap full of those, freed
    /// between files that stay, fragments into tens of megabytes no later
    /// allocation fits.
    public mutating func finishAndReset() -> (fileHash: Hash256, chunks: [ChunkRef]) {
        if chunker.finish() || chunkLengthSoFar > 0 {
            chunks.append(ChunkRef(length: UInt32(chunkLengthSoFar), hash: chunkHasher.finalizeHashAndReset()))
        }
        let result = (fileHasher.finalizeHashAndReset(), chunks)
        chunker = FastCDC(configuration: chunker.configuration)
        chunks = []
        totalLength = 0
        chunkLengthSoFar = 0
        return result
    }
}
