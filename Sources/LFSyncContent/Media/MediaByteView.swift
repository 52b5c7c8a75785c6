/// Bounds-checked, endian-aware random access into an in-memory blob.
///
/// The project's `ByteReader` is a forward-only big-endian cursor made for our
/// own wire formats; TIFF is little- *or* big-endian and is navigated by
/// absolute offsets, and ISOBMFF payloads are easier to read with both random
/// and sequential access. Every accessor checks the requested range with
/// overflow-safe arithmetic and throws instead of trapping.
package struct MediaByteView {
    package enum ByteOrder: Sendable {
        case bigEndian, littleEndian
    }

    private let storage: [UInt8]
    private let start: Int
    /// Bytes visible through this view.
    package let count: Int

    package init(_ bytes: [UInt8]) {
        storage = bytes
        start = 0
        count = bytes.count
    }

    private init(storage: [UInt8], start: Int, count: Int) {
        self.storage = storage
        self.start = start
        self.count = count
    }

    /// The storage index of `offset`, after proving `offset..<offset+length` lies inside the view.
    private func storageIndex(_ offset: Int, _ length: Int) throws(MediaMetadataError) -> Int {
        guard offset >= 0, length >= 0 else { throw .malformed("negative offset or length") }
        let (end, overflow) = offset.addingReportingOverflow(length)
        guard !overflow, end <= count else {
            throw .truncated("\(length) bytes at \(offset) in a \(count)-byte structure")
        }
        return start + offset
    }

    /// Converts an offset or length read from the file into an `Int`, refusing
    /// values that do not fit (which are out of bounds anyway).
    package static func int<T: BinaryInteger>(_ value: T) throws(MediaMetadataError) -> Int {
        guard let result = Int(exactly: value) else { throw .overLimit("value \(value)") }
        return result
    }

    package func uint8(at offset: Int) throws(MediaMetadataError) -> UInt8 {
        storage[try storageIndex(offset, 1)]
    }

    /// An unsigned integer of `byteCount` (0...8) bytes; 0 bytes read as 0, as
    /// ISOBMFF defines for absent `iloc` fields.
    package func uint(at offset: Int, byteCount: Int, _ order: ByteOrder) throws(MediaMetadataError) -> UInt64 {
        guard (0...8).contains(byteCount) else { throw .malformed("integer of \(byteCount) bytes") }
        let first = try storageIndex(offset, byteCount)
        var value: UInt64 = 0
        for step in 0..<byteCount {
            let index = order == .bigEndian ? first + step : first + byteCount - 1 - step
            value = value << 8 | UInt64(storage[index])
        }
        return value
    }

    package func uint16(at offset: Int, _ order: ByteOrder = .bigEndian) throws(MediaMetadataError) -> UInt16 {
        UInt16(truncatingIfNeeded: try uint(at: offset, byteCount: 2, order))
    }

    package func uint32(at offset: Int, _ order: ByteOrder = .bigEndian) throws(MediaMetadataError) -> UInt32 {
        UInt32(truncatingIfNeeded: try uint(at: offset, byteCount: 4, order))
    }

    package func bytes(at offset: Int, length: Int) throws(MediaMetadataError) -> [UInt8] {
        let first = try storageIndex(offset, length)
        return Array(storage[first..<first + length])
    }

    /// A view of `length` bytes at `offset` (to the end when `length` is nil), sharing storage.
    package func subview(at offset: Int, length: Int? = nil) throws(MediaMetadataError) -> MediaByteView {
        guard offset >= 0, offset <= count else { throw .truncated("subview at \(offset) of \(count)") }
        let length = length ?? count - offset
        let first = try storageIndex(offset, length)
        return MediaByteView(storage: storage, start: first, count: length)
    }

    /// Whether the bytes at `offset` equal `prefix`; false (not an error) when they run out.
    package func hasPrefix(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
        guard let first = try? storageIndex(offset, prefix.count) else { return false }
        return storage[first..<first + prefix.count].elementsEqual(prefix)
    }
}

/// A loaded box payload can itself be walked as a container.
extension MediaByteView: MediaByteSource {
    package var size: UInt64 { UInt64(count) }

    package func read(at offset: UInt64, length: Int) throws(MediaMetadataError) -> [UInt8] {
        try validateRead(at: offset, length: length)
        return try bytes(at: MediaByteView.int(offset), length: length)
    }

    /// Shares the storage: no copy.
    package func view(at offset: UInt64, length: Int) throws(MediaMetadataError) -> MediaByteView {
        try validateRead(at: offset, length: length)
        return try subview(at: MediaByteView.int(offset), length: length)
    }
}
