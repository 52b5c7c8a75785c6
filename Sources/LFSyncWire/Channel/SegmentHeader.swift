import LFSyncCrypto

/// The header of a shared segment (PROTOCOL.md, "Shared segments"): how many
/// plaintext bytes the segment holds and the one-time key that opens it. It
/// travels as the plaintext of one ordinary Noise message, right after the
/// marker, so only this channel's peer learns the key, and the channel's
/// nonce order fixes where the segment stands in the stream.
struct SegmentHeader {
    /// Two zero bytes where a Noise message's length would be: no transport
    /// message is empty (it has at least its 16-byte tag), so a receiver can
    /// never mistake the marker for one.
    static let marker: [UInt8] = [0, 0]
    /// u32 length, then the 32-byte key.
    static let encodedLength = 4 + Noise.keyLength

    var length: Int
    var key: SecureBytes

    init(length: Int, key: SecureBytes) {
        self.length = length
        self.key = key
    }

    /// Reads a decrypted header; `limit` bounds the segment (the frame limit:
    /// a segment never holds more than one frame may).
    init(decoding plaintext: [UInt8], limit: Int) throws(SecureChannelError) {
        guard plaintext.count == Self.encodedLength else {
            throw .badSegment("header of \(plaintext.count) bytes, expected \(Self.encodedLength)")
        }
        let length = plaintext.prefix(4).reduce(0) { $0 << 8 | Int($1) }
        guard length > 0, length <= limit else {
            throw .badSegment("segment of \(length) bytes; the limit is 1 to \(limit)")
        }
        self.length = length
        key = SecureBytes(copying: plaintext.dropFirst(4))
    }

    /// The header's plaintext. It holds the key: callers wipe it after sealing.
    var encoded: [UInt8] {
        var bytes = (0..<4).map { UInt8(truncatingIfNeeded: length >> (8 * (3 - $0))) }
        key.withUnsafeBytes { bytes.append(contentsOf: $0) }
        return bytes
    }
}
