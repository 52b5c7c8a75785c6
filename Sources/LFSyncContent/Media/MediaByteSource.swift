/// Random access to the bytes of one media file, in memory (`MediaByteView`)
/// or on disk (`FileMediaSource`).
///
/// The container walkers are written once against this seam so the in-memory
/// path that tests and fuzzing exercise is the very code that reads real files
/// — where it matters that we seek over a multi-gigabyte `mdat` instead of
/// loading it.
package protocol MediaByteSource {
    /// Total length in bytes.
    var size: UInt64 { get }

    /// Exactly `length` bytes starting at `offset`; throws when the range leaves
    /// the source or `length` exceeds `MediaMetadataLimits.maxSingleRead`.
    func read(at offset: UInt64, length: Int) throws(MediaMetadataError) -> [UInt8]

    /// The same bytes as `read`, to be parsed: a source already in memory
    /// lends them without a copy (a receiver reads the Live Photo identifier
    /// of every file it lands from the bytes it holds, one header at a time).
    func view(at offset: UInt64, length: Int) throws(MediaMetadataError) -> MediaByteView
}

extension MediaByteSource {
    package func view(at offset: UInt64, length: Int) throws(MediaMetadataError) -> MediaByteView {
        MediaByteView(try read(at: offset, length: length))
    }
}

extension MediaByteSource {
    /// Checks `offset..<offset+length` against the source and the read cap
    /// without overflowing; shared by every implementation.
    package func validateRead(at offset: UInt64, length: Int) throws(MediaMetadataError) {
        guard length >= 0, length <= MediaMetadataLimits.maxSingleRead else {
            throw .overLimit("read of \(length) bytes")
        }
        let (end, overflow) = offset.addingReportingOverflow(UInt64(length))
        guard !overflow, end <= size else {
            throw .truncated("read of \(length) bytes at \(offset) in \(size)")
        }
    }
}
