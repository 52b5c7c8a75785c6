import LFSyncSystem

/// Rules for the free-text fields of messages (device names, reasons, error
/// texts): UTF-8 with a 16-bit length prefix, a per-field byte limit, and no
/// control characters or bidirectional overrides.
///
/// Peers' texts end up on terminals and in logs; refusing C0/C1 controls
/// keeps a hostile peer from injecting escape sequences, and refusing bidi
/// overrides keeps it from making one device name look like another.
package enum WireText {
    /// Whether a scalar may appear in wire text.
    package static func isAllowed(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: false          // C0, DEL, C1
        case 0x202A...0x202E, 0x2066...0x2069: false  // bidi embeddings, overrides, isolates
        default: true
        }
    }

    /// Checks a text against the rules; used by encoders and decoders alike so
    /// we never send what we would refuse.
    package static func validate(_ text: String, limit: Int, field: String) throws(ByteReaderError) {
        let length = text.utf8.count
        guard length <= limit else { throw .lengthOverLimit(length: length, limit: limit) }
        guard text.unicodeScalars.allSatisfy(isAllowed) else {
            throw .invalidValue("\(field) contains control characters")
        }
    }

    /// Makes any string acceptable for a field of `maxBytes`: control and bidi
    /// characters become spaces, and the text is cut at a character boundary.
    /// Use it for texts we do not control (host names, system error messages).
    package static func fitted(_ text: String, maxBytes: Int) -> String {
        var out = ""
        var used = 0
        for character in text {
            let cleaned = character.unicodeScalars.allSatisfy(isAllowed) ? String(character) : " "
            let size = cleaned.utf8.count
            guard used + size <= maxBytes else { break }
            out += cleaned
            used += size
        }
        return out
    }
}

extension ByteReader {
    package mutating func readWireText(limit: Int, field: String) throws(ByteReaderError) -> String {
        let text = try readString(limit: limit)
        try WireText.validate(text, limit: limit, field: field)
        return text
    }

    /// `u8 present (0 or 1)`, then the text when present.
    package mutating func readOptionalWireText(limit: Int, field: String) throws(ByteReaderError) -> String? {
        try readWireBool(field: "\(field) presence") ? try readWireText(limit: limit, field: field) : nil
    }

    /// A `u8` that must be 0 or 1: anything else is refused, so every value has one encoding.
    package mutating func readWireBool(field: String) throws(ByteReaderError) -> Bool {
        switch try readUInt8() {
        case 0: return false
        case 1: return true
        case let other: throw .invalidValue("\(field) byte \(other), expected 0 or 1")
        }
    }
}

extension ByteWriter {
    /// Writes text already checked with `WireText.validate`.
    package mutating func writeWireText(_ text: String) {
        writeString(text)
    }

    package mutating func writeOptionalWireText(_ text: String?) {
        writeWireBool(text != nil)
        if let text { writeString(text) }
    }

    package mutating func writeWireBool(_ value: Bool) {
        write(value ? UInt8(1) : UInt8(0))
    }
}
