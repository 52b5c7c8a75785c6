/// A `MediaByteSource` over an open file: every read is one bounded `pread`,
/// so memory use stays at the size of the boxes we actually look at.
struct FileMediaSource: MediaByteSource {
    private let file: ReadOnlyFile
    let size: UInt64

    /// The caller keeps the file open for as long as the source is used.
    init(file: ReadOnlyFile) throws(MediaMetadataError) {
        self.file = file
        do {
            size = try file.status().size
        } catch {
            throw .io("cannot determine file size: \(error)")
        }
    }

    func read(at offset: UInt64, length: Int) throws(MediaMetadataError) -> [UInt8] {
        try validateRead(at: offset, length: length)
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
