/// A bounds-checked cursor over untrusted bytes.
///
/// Every parser of bytes we did not write ourselves (wire messages, media
/// files, blobs read back from disk) goes through this type, so a short or
/// lying input ends in `ByteReaderError` instead of a trap.
package struct ByteReader: Sendable {
    package let bytes: [UInt8]
    package private(set) var offset: Int

    package init(_ bytes: [UInt8]) {
        self.bytes = bytes
        self.offset = 0
    }

    package var remaining: Int { bytes.count - offset }
    package var isAtEnd: Bool { offset == bytes.count }

    package mutating func readUInt8() throws(ByteReaderError) -> UInt8 {
        guard remaining >= 1 else { throw .truncated(needed: 1, available: remaining) }
        defer { offset += 1 }
        return bytes[offset]
    }

    package mutating func readUInt16() throws(ByteReaderError) -> UInt16 {
        UInt16(truncatingIfNeeded: try readBigEndian(byteCount: 2))
    }

    package mutating func readUInt32() throws(ByteReaderError) -> UInt32 {
        UInt32(truncatingIfNeeded: try readBigEndian(byteCount: 4))
    }

    package mutating func readUInt64() throws(ByteReaderError) -> UInt64 {
        try readBigEndian(byteCount: 8)
    }

    package mutating func readInt64() throws(ByteReaderError) -> Int64 {
        Int64(bitPattern: try readUInt64())
    }

    /// Reads `count` bytes; the caller has already checked `count` against its own cap.
    package mutating func readBytes(_ count: Int) throws(ByteReaderError) -> [UInt8] {
        Array(try readSlice(count))
    }

    /// Reads `count` bytes as a slice sharing the reader's storage: no copy, for
    /// bulk data (a chunk) that would otherwise be copied out of its frame.
    package mutating func readSlice(_ count: Int) throws(ByteReaderError) -> ArraySlice<UInt8> {
        guard count >= 0, remaining >= count else {
            throw .truncated(needed: count, available: remaining)
        }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    /// `readLengthPrefixed(limit:)` as a slice sharing the reader's storage.
    package mutating func readLengthPrefixedSlice(limit: Int) throws(ByteReaderError) -> ArraySlice<UInt8> {
        let length = Int(try readUInt32())
        guard length <= limit else { throw .lengthOverLimit(length: length, limit: limit) }
        return try readSlice(length)
    }

    /// Reads a 32-bit big-endian length, rejects it above `limit`, then the bytes.
    package mutating func readLengthPrefixed(limit: Int) throws(ByteReaderError) -> [UInt8] {
        Array(try readLengthPrefixedSlice(limit: limit))
    }

    /// A UTF-8 string with a 16-bit length prefix.
    package mutating func readString(limit: Int) throws(ByteReaderError) -> String {
        let length = Int(try readUInt16())
        guard length <= limit else { throw .lengthOverLimit(length: length, limit: limit) }
        let raw = try readSlice(length)
        guard let string = String(validating: raw, as: UTF8.self) else { throw .invalidUTF8 }
        return string
    }

    /// A count that must not exceed `limit` — checked before the caller allocates.
    package mutating func readCount(limit: Int) throws(ByteReaderError) -> Int {
        let count = Int(try readUInt32())
        guard count <= limit else { throw .countOverLimit(count: count, limit: limit) }
        return count
    }

    package func expectEnd() throws(ByteReaderError) {
        guard isAtEnd else { throw .trailingBytes(remaining) }
    }

    private mutating func readBigEndian(byteCount: Int) throws(ByteReaderError) -> UInt64 {
        guard remaining >= byteCount else { throw .truncated(needed: byteCount, available: remaining) }
        var value: UInt64 = 0
        for index in offset..<offset + byteCount {
            value = value << 8 | UInt64(bytes[index])
        }
        offset += byteCount
        return value
    }
}

package enum ByteReaderError: Error, Equatable, Sendable, CustomStringConvertible {
    case truncated(needed: Int, available: Int)
    case lengthOverLimit(length: Int, limit: Int)
    case countOverLimit(count: Int, limit: Int)
    case invalidUTF8
    case trailingBytes(Int)
    case invalidValue(String)

    package var description: String {
        switch self {
        case let .truncated(needed, available): "truncated input: needed \(needed) bytes, \(available) left"
        case let .lengthOverLimit(length, limit): "length \(length) exceeds the limit of \(limit)"
        case let .countOverLimit(count, limit): "count \(count) exceeds the limit of \(limit)"
        case .invalidUTF8: "text is not valid UTF-8"
        case let .trailingBytes(count): "\(count) unexpected trailing bytes"
        case let .invalidValue(what): "invalid value: \(what)"
        }
    }
}
