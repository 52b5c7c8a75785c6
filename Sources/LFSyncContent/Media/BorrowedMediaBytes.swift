/// A `MediaByteSource` over bytes lent for the length of one call — a
/// scanner's read buffer holding a whole small file it has just hashed.
/// Only the ranges the parser asks for are copied out, as `FileMediaSource`
/// copies them out of its head; nothing outlives the call.
struct BorrowedMediaBytes: MediaByteSource {
    private let bytes: UnsafeRawBufferPointer

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    var size: UInt64 { UInt64(bytes.count) }

    func read(at offset: UInt64, length: Int) throws(MediaMetadataError) -> [UInt8] {
        try validateRead(at: offset, length: length)
        // `validateRead` keeps offset + length within the size, so both fit in an Int.
        let start = Int(offset)
        return [UInt8](UnsafeRawBufferPointer(rebasing: bytes[start ..< start + length]))
    }
}
