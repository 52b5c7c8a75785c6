import LFSyncCrypto

/// Cuts and hashes a byte stream in one pass: FastCDC boundaries and the hash of
/// each chunk (`ContentHash.chunk`). The file's hash is made from the chunk list at
/// the end (`ContentHash.file`), so every byte is hashed once. Fed in order, it
/// holds no data of its own, so memory is the caller's read buffer.
package struct ChunkingHasher: ~Copyable {
    private var chunker: FastCDC
    private var chunkHasher = ContentHash.chunkHasher()
    private var chunks: [ChunkRef] = []
    /// Bytes of the chunk under way that the hasher has seen.
    private var chunkLengthSoFar = 0

    package init(configuration: ChunkerConfiguration = .default) {
        chunker = FastCDC(configuration: configuration)
    }

    package mutating func update(_ buffer: UnsafeRawBufferPointer) {
        guard buffer.count > 0 else { return }
        var start = 0
        var cuts: [Int] = []
        chunker.scan(buffer) { cuts.append($0) }
        for end in cuts {
            chunkHasher.update(UnsafeRawBufferPointer(rebasing: buffer[start..<end]))
            let length = chunkLengthSoFar + (end - start)
            chunks.append(ChunkRef(length: UInt32(length), hash: chunkHasher.finalizeAndReset()))
            chunkLengthSoFar = 0
            start = end
        }
        chunkHasher.update(UnsafeRawBufferPointer(rebasing: buffer[start...]))
        chunkLengthSoFar += buffer.count - start
    }

    /// The file hash and the chunk list. An empty stream has no chunks.
    package consuming func finish() -> (fileHash: Hash256, chunks: [ChunkRef]) {
        finishAndReset()
    }

    /// `finish()`, leaving the hasher ready for the next stream. A scan of
    /// 200,000 files reuses one hasher per worker: each new one allocates a
    /// hash state, and a heap full of those, freed between files that stay,
    /// fragments into tens of megabytes no later allocation fits.
    package mutating func finishAndReset() -> (fileHash: Hash256, chunks: [ChunkRef]) {
        let pending = chunker.finish() || chunkLengthSoFar > 0
        if pending {
            chunks.append(ChunkRef(length: UInt32(chunkLengthSoFar), hash: chunkHasher.finalizeAndReset()))
        }
        let result = (fileHash: ContentHash.file(chunks: chunks), chunks: chunks)
        chunker = FastCDC(configuration: chunker.configuration)
        chunks = []
        chunkLengthSoFar = 0
        return result
    }
}
