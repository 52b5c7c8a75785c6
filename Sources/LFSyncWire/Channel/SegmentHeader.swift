import LFSyncCrypto

/// The header of a shared segment (PROTOCOL.md, "Shared segments"): where the
/// segment stands in the frame stream, how many plaintext bytes it holds and
/// the one-time key that opens it. It travels as one Noise message of the
/// channel, right after the marker, so only this channel's peer learns the key
/// and the channel's nonce order fixes the header's place among the messages.
///
/// Why the associated data and the offset (protocol version 3): in version 2 a
/// header decrypted like any transport message, so someone on the link who
/// deleted a marker turned the header into 36 bytes of frame stream and shifted
/// every frame boundary after it; a co-recipient of the same broadcast, who
/// knows every one-time key, could then place bytes where frame headers are
/// read. Now a header opens only as a header and a transport message only as
/// one, and a header names the stream offset at which its segment begins.
package struct SegmentHeader {
    /// Two zero bytes where a Noise message's length would be: no transport
    /// message is empty (it has at least its 16-byte tag), so a receiver can
    /// never mistake the marker for one.
    package static let marker: [UInt8] = [0, 0]
    /// The associated data of every header message (transport messages have none).
    package static let associatedData = Array("lfsync/3 segment header".utf8)
    /// u64 offset, u32 length, then the 32-byte key.
    package static let encodedLength = 8 + 4 + Noise.keyLength

    /// Frame-stream bytes before the segment's first byte, counted from the
    /// first byte after the handshake.
    package var offset: UInt64
    package var length: Int
    package var key: SecureBytes

    package init(offset: UInt64, length: Int, key: SecureBytes) {
        self.offset = offset
        self.length = length
        self.key = key
    }

    /// Reads a decrypted header; `limit` bounds the segment (the frame limit:
    /// a segment never holds more than one frame may).
    package init(decoding plaintext: [UInt8], limit: Int) throws(SecureChannelError) {
        guard plaintext.count == Self.encodedLength else {
            throw .badSegment("header of \(plaintext.count) bytes, expected \(Self.encodedLength)")
        }
        let offset = plaintext.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let length = plaintext.dropFirst(8).prefix(4).reduce(0) { $0 << 8 | Int($1) }
        guard length > 0, length <= limit else {
            throw .badSegment("segment of \(length) bytes; the limit is 1 to \(limit)")
        }
        self.offset = offset
        self.length = length
        key = SecureBytes(copying: plaintext.dropFirst(12))
    }

    /// The header's plaintext. It holds the key: callers wipe it after sealing.
    package var encoded: [UInt8] {
        var bytes = (0..<8).map { UInt8(truncatingIfNeeded: offset >> (8 * (7 - $0))) }
        bytes += (0..<4).map { UInt8(truncatingIfNeeded: length >> (8 * (3 - $0))) }
        key.withUnsafeBytes { bytes.append(contentsOf: $0) }
        return bytes
    }
}
