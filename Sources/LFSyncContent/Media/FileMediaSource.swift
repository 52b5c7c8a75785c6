import LFSyncSystem

/// A `MediaByteSource` over an open file. The file's first `headLength`
/// bytes are read once, up front: that is where JPEG and HEIF keep their
/// metadata, and a parser walking boxes and TIFF entries there would
/// otherwise cost a `pread` per field — five or six per photo, thousands of
/// system calls for a folder of them. Anything beyond the head is one
/// bounded `pread` per read, so memory stays at the boxes actually looked at.
struct FileMediaSource: MediaByteSource {
    /// Small enough to be nothing beside a photo, big enough for its metadata.
    package static let headLength = 64 << 10

    private let file: ReadOnlyFile
    private let head: [UInt8]
    package let size: UInt64

    /// The caller keeps the file open for as long as the source is used.
    package init(file: ReadOnlyFile) throws(MediaMetadataError) {
        self.file = file
        do {
            size = try file.status().size
            head = try file.read(atOffset: 0, count: Int(min(size, UInt64(Self.headLength))))
        } catch {
            throw .io("cannot read the file: \(error)")
        }
    }

    package func read(at offset: UInt64, length: Int) throws(MediaMetadataError) -> [UInt8] {
        try validateRead(at: offset, length: length)
        // `validateRead` keeps offset + length within the size, so this cannot overflow.
        if offset + UInt64(length) <= UInt64(head.count) {
            return Array(head[Int(offset)..<Int(offset) + length])
        }
        let bytes: [UInt8]
        do {
            bytes = try file.read(atOffset: offset, count: length)
        } catch {
            throw .io("read at \(offset): \(error)")
        }
        // A short read means the file shrank under us.
        guard bytes.count == length else { throw .truncated("file ended while reading at \(offset)") }
        return bytes
    }
}
