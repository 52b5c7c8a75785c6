/// Builds the canonical big-endian encodings read back by `ByteReader`.
package struct ByteWriter: Sendable {
    package private(set) var bytes: [UInt8] = []

    package init(capacity: Int = 0) {
        bytes.reserveCapacity(capacity)
    }

    package mutating func write(_ value: UInt8) { bytes.append(value) }
    package mutating func write(_ value: UInt16) { writeBigEndian(UInt64(value), byteCount: 2) }
    package mutating func write(_ value: UInt32) { writeBigEndian(UInt64(value), byteCount: 4) }
    package mutating func write(_ value: UInt64) { writeBigEndian(value, byteCount: 8) }
    package mutating func write(_ value: Int64) { writeBigEndian(UInt64(bitPattern: value), byteCount: 8) }
    package mutating func write<S: Sequence>(contentsOf raw: S) where S.Element == UInt8 {
        bytes.append(contentsOf: raw)
    }

    /// 32-bit length, then the bytes.
    package mutating func writeLengthPrefixed(_ raw: [UInt8]) {
        write(UInt32(raw.count))
        bytes.append(contentsOf: raw)
    }

    /// 16-bit length, then UTF-8; callers keep strings under 64 KiB (paths are capped far lower).
    package mutating func writeString(_ string: String) {
        let utf8 = Array(string.utf8)
        precondition(utf8.count <= Int(UInt16.max), "string too long for a 16-bit length")
        write(UInt16(utf8.count))
        bytes.append(contentsOf: utf8)
    }

    private mutating func writeBigEndian(_ value: UInt64, byteCount: Int) {
        for shift in stride(from: (byteCount - 1) * 8, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }
}
