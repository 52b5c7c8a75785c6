import LFSyncSystem

/// A 32-byte BLAKE2b-256 digest: the name of every chunk, file and asset.
///
/// Stored inline as four words so that millions of them in a chunk index or a
/// ledger query cost no heap allocations and hash/compare cheaply.
public struct Hash256: Hashable, Comparable, Sendable, CustomStringConvertible, Codable {
    public static let byteCount = 32

    fileprivate var w0: UInt64, w1: UInt64, w2: UInt64, w3: UInt64

    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == Self.byteCount else { return nil }
        // Into the four words directly: every hash read from the wire or a stored
        // manifest (one per chunk) passes here, and a scratch array would be an allocation.
        (w0, w1, w2, w3) = (0, 0, 0, 0)
        for (index, byte) in bytes.enumerated() {
            switch index / 8 {
            case 0: w0 = w0 << 8 | UInt64(byte)
            case 1: w1 = w1 << 8 | UInt64(byte)
            case 2: w2 = w2 << 8 | UInt64(byte)
            default: w3 = w3 << 8 | UInt64(byte)
            }
        }
    }

    /// The same from raw memory (a column SQLite lends, a received buffer), four
    /// loads. Called from another module, the generic `init(bytes:)` runs
    /// unspecialised: a metadata lookup per byte, more than the SQLite read around it.
    public init?(bytes: UnsafeRawBufferPointer) {
        guard bytes.count == Self.byteCount else { return nil }
        w0 = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
        w1 = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        w2 = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 16, as: UInt64.self))
        w3 = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 24, as: UInt64.self))
    }

    public init?(hex: String) {
        let utf8 = Array(hex.utf8)
        guard utf8.count == Self.byteCount * 2 else { return nil }
        var raw = [UInt8]()
        raw.reserveCapacity(Self.byteCount)
        for index in stride(from: 0, to: utf8.count, by: 2) {
            guard let high = Self.nibble(utf8[index]), let low = Self.nibble(utf8[index + 1]) else { return nil }
            raw.append(high << 4 | low)
        }
        self.init(bytes: raw)
    }

    public var bytes: [UInt8] {
        [UInt8](unsafeUninitializedCapacity: Self.byteCount) { buffer, count in
            for (index, word) in [w0, w1, w2, w3].enumerated() {
                for byte in 0..<8 {
                    buffer[index * 8 + byte] = UInt8(truncatingIfNeeded: word >> UInt64(56 - 8 * byte))
                }
            }
            count = Self.byteCount
        }
    }

    /// The 32 bytes lent for one call, from the stack: binding or writing one
    /// hash at a time (per received file, per chunk row) without the
    /// allocation `bytes` makes.
    package func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        let words = (w0.bigEndian, w1.bigEndian, w2.bigEndian, w3.bigEndian)
        return try Swift.withUnsafeBytes(of: words) { (raw) throws(E) -> R in try body(raw) }
    }

    public var hex: String {
        String(unsafeUninitializedCapacity: Self.byteCount * 2) { writeHex(into: $0) }
    }

    /// Writes the 64 lowercase hex digits at the start of `buffer` and returns
    /// how many bytes that is: for names built around a hash (staging names one
    /// per received file) in one allocation.
    /// - Precondition: `buffer` holds at least 64 bytes.
    package func writeHex(into buffer: UnsafeMutableBufferPointer<UInt8>) -> Int {
        precondition(buffer.count >= Self.byteCount * 2)
        var position = 0
        for word in [w0, w1, w2, w3] {
            position += Self.writeHex(word, digits: 16, into: UnsafeMutableBufferPointer(rebasing: buffer[position...]))
        }
        return position
    }

    /// The low `digits` hex digits of `value`, most significant first, lowercase.
    package static func writeHex(_ value: UInt64, digits: Int, into buffer: UnsafeMutableBufferPointer<UInt8>) -> Int {
        precondition(digits <= 16 && buffer.count >= digits)
        for index in 0..<digits {
            let nibble = UInt8(truncatingIfNeeded: value >> UInt64(4 * (digits - 1 - index))) & 0x0f
            buffer[index] = nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
        }
        return digits
    }

    public var description: String { hex }

    /// The first 12 hex digits: enough for humans to tell assets apart in a listing.
    public var shortHex: String { String(hex.prefix(12)) }

    public static func < (lhs: Hash256, rhs: Hash256) -> Bool {
        (lhs.w0, lhs.w1, lhs.w2, lhs.w3) < (rhs.w0, rhs.w1, rhs.w2, rhs.w3)
    }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let value = Hash256(hex: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a 64-digit hex hash"))
        }
        self = value
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(hex)
    }

    private static func nibble(_ char: UInt8) -> UInt8? {
        switch char {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): char - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): char - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): char - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension ByteWriter {
    /// Word by word: `hash.bytes` would allocate an array per hash written.
    package mutating func write(_ hash: Hash256) {
        write(hash.w0)
        write(hash.w1)
        write(hash.w2)
        write(hash.w3)
    }
}

extension ByteReader {
    package mutating func readHash() throws(ByteReaderError) -> Hash256 {
        guard let hash = Hash256(bytes: try readSlice(Hash256.byteCount)) else {
            throw .invalidValue("hash")
        }
        return hash
    }
}
