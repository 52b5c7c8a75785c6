/// RFC 4648 base32 (alphabet `A–Z2–7`, no padding), the text form of device IDs.
///
/// Base32 rather than hex or base64 because it is case-insensitive, has no
/// punctuation, and leaves out the digits most easily confused with letters
/// (0/O, 1/I/L, 8/B): good for IDs read aloud or typed from another screen.
enum Base32 {
    package static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    /// The 5-bit value of an upper-case alphabet character, or nil.
    package static func value(of character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): character - UInt8(ascii: "A")
        case UInt8(ascii: "2")...UInt8(ascii: "7"): character - UInt8(ascii: "2") + 26
        default: nil
        }
    }

    /// Encodes most-significant bit first; the last character is zero-padded on the right.
    package static func encode(_ bytes: [UInt8]) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity((bytes.count * 8 + 4) / 5)
        var accumulator: UInt32 = 0
        var bitCount = 0
        for byte in bytes {
            accumulator = accumulator << 8 | UInt32(byte)
            bitCount += 8
            while bitCount >= 5 {
                bitCount -= 5
                out.append(alphabet[Int(accumulator >> UInt32(bitCount) & 0x1f)])
            }
            accumulator &= (1 << UInt32(bitCount)) - 1
        }
        if bitCount > 0 {
            out.append(alphabet[Int(accumulator << UInt32(5 - bitCount) & 0x1f)])
        }
        return out
    }

    /// Decodes 5-bit values (already mapped through `value(of:)`) into bytes.
    /// Returns nil unless the padding bits of the last character are zero, so
    /// that every byte string has exactly one accepted text form.
    package static func decode(values: [UInt8]) -> [UInt8]? {
        var out = [UInt8]()
        out.reserveCapacity(values.count * 5 / 8)
        var accumulator: UInt32 = 0
        var bitCount = 0
        for value in values {
            accumulator = accumulator << 5 | UInt32(value & 0x1f)
            bitCount += 5
            if bitCount >= 8 {
                bitCount -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bitCount)))
                accumulator &= (1 << UInt32(bitCount)) - 1
            }
        }
        return accumulator == 0 ? out : nil
    }
}
