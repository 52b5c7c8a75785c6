/// One application frame: `u8 type, u32 big-endian payload length, payload`.
///
/// Frames are the unit the message codec works on; the byte stream of frames
/// is cut into Noise transport messages independently of frame boundaries
/// (PROTOCOL.md, "Framing"), so a frame may be larger than one Noise message.
/// The type byte is kept raw here: an unknown type is a message-level error,
/// not a framing error, so framing stays usable by any future message set.
package struct Frame: Hashable, Sendable {
    /// One type byte plus a 32-bit length.
    package static let headerLength = 5

    package var type: UInt8
    package var payload: [UInt8]

    package init(type: UInt8, payload: [UInt8]) {
        self.type = type
        self.payload = payload
    }

    /// The five header bytes for this frame.
    ///
    /// - Precondition: the payload is shorter than 4 GiB (every encoder caps far lower).
    package var header: [UInt8] {
        precondition(payload.count <= Int(UInt32.max), "frame payload over 4 GiB")
        let length = UInt32(payload.count)
        return [type, UInt8(truncatingIfNeeded: length >> 24), UInt8(truncatingIfNeeded: length >> 16),
                UInt8(truncatingIfNeeded: length >> 8), UInt8(truncatingIfNeeded: length)]
    }

    /// Header and payload as one contiguous byte string.
    package func encoded() -> [UInt8] {
        var bytes = [UInt8]()
        bytes.reserveCapacity(Self.headerLength + payload.count)
        bytes.append(contentsOf: header)
        bytes.append(contentsOf: payload)
        return bytes
    }
}
