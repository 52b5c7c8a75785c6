import LFSyncCrypto

/// Cuts and hashes a byte stream in one pass: FastCDC boundaries, a
/// BLAKE2b-256 per chunk and one over the whole stream. Fed in order, it
/// holds no data of its own, so memory is the caller's read buffer.
package struct ChunkingHasher: ~Copyable {
    private var chunker: FastCDC
    private var fileHasher = Blake2b()
    private var chunkHasher = Blake2b()
    private var chunks: [ChunkRef] = []
    private var totalLength: UInt64 = 0

    package init(configuration: ChunkerConfiguration = .default) {
        chunker = FastCDC(configuration: configuration)
    }

    package mutating func update(_ buffer: UnsafeRawBufferPointer) {
        guard buffer.count > 0 else { return }
        totalLength += UInt64(buffer.count)
        var start = 0
        var cuts: [Int] = []
        chunker.scan(buffer) { cuts.append($0) }
        if !inFirstChunk { fileHasher.update(buffer) }
        for end in cuts {
            chunkHasher.update(UnsafeRawBufferPointer(rebasing: buffer[start..<end]))
            if inFirstChunk {
                // Until the first cut the file hash and the chunk hash have seen the same bytes:
                // the file hasher takes the chunk hasher's state instead of hashing them again.
                fileHasher.copyState(from: chunkHasher)
                fileHasher.update(UnsafeRawBufferPointer(rebasing: buffer[end...]))
                inFirstChunk = false
            }
            let length = chunkLengthSoFar + (end - start)
            chunks.append(ChunkRef(length: UInt32(length), hash: chunkHasher.finalizeHashAndReset()))
            chunkLengthSoFar = 0
            start = end
        }
        chunkHasher.update(UnsafeRawBufferPointer(rebasing: buffer[start...]))
        chunkLengthSoFar += buffer.count - start
    }

    /// No cut yet: the file hasher has been fed nothing, the chunk hasher everything.
    /// A file of one chunk — every file under the minimum chunk size, most of a photo
    /// library's files — is hashed once, not twice: its file hash is its chunk's.
    private var inFirstChunk = true

    private var chunkLengthSoFar = 0

    /// The whole-stream hash and the chunk list. An empty stream has no chunks.
    package consuming func finish() -> (fileHash: Hash256, chunks: [ChunkRef]) {
        finishAndReset()
    }

    /// `finish()`, leaving the hasher ready for the next stream. A scan of
    /// 200,000 files reuses one hasher per worker: each new one allocates two
    /// 64-byte-aligned libsodium states, and a heap full of those, freed
    /// between files that stay, fragments into tens of megabytes no later
    /// allocation fits.
    package mutating func finishAndReset() -> (fileHash: Hash256, chunks: [ChunkRef]) {
        let pending = chunker.finish() || chunkLengthSoFar > 0
        let result: (fileHash: Hash256, chunks: [ChunkRef])
        if inFirstChunk {
            let hash = chunkHasher.finalizeHashAndReset()
            if pending { chunks.append(ChunkRef(length: UInt32(chunkLengthSoFar), hash: hash)) }
            result = (hash, chunks)
        } else {
            if pending { chunks.append(ChunkRef(length: UInt32(chunkLengthSoFar), hash: chunkHasher.finalizeHashAndReset())) }
            result = (fileHasher.finalizeHashAndReset(), chunks)
        }
        inFirstChunk = true
        chunker = FastCDC(configuration: chunker.configuration)
        chunks = []
        totalLength = 0
        chunkLengthSoFar = 0
        return result
    }
}
