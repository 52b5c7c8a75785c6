import LFSyncCrypto
import LFSyncSystem

/// The content hashes of bytes on disk, read through a descriptor: here, beside
/// `ContentHash`, because which key and which chunker make a hash is the content
/// model's business.
extension OwnedDescriptor {
    /// The chunk hash of `length` bytes from `offset`, read through one reusable
    /// buffer; `nil` if the file ends first.
    package func chunkHash(from offset: UInt64, length: UInt64, buffer: UnsafeMutableRawBufferPointer, _ what: String) throws(SystemError) -> Hash256? {
        var hasher = ContentHash.chunkHasher()
        guard try readPieces(from: offset, length: length, buffer: buffer, what, { hasher.update($0) }) else { return nil }
        return hasher.finalizeAndReset()
    }
}
