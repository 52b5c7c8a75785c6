/// Makes a name received from a peer safe to show: a hostile path must not be
/// able to move the cursor, recolour the terminal, fake a line of log output or
/// reverse the text direction when an error message quotes it.
package enum PrintablePath {
    /// Longest escaped form we print; a 5000-byte path is cut, the rest elided.
    package static let maxDisplayCharacters = 160

    /// Control and bidirectional-formatting characters become `\u{…}`, a
    /// backslash becomes `\\`; printable text, including any script and emoji,
    /// stays as it is.
    package static func escape(_ raw: String) -> String {
        var out = ""
        var printed = 0
        for scalar in raw.unicodeScalars {
            guard printed < maxDisplayCharacters else {
                out += "…"
                break
            }
            if scalar == "\\" {
                out += "\\\\"
            } else if needsEscaping(scalar) {
                out += "\\u{" + String(scalar.value, radix: 16) + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
            printed += 1
        }
        return out
    }

    package static func needsEscaping(_ scalar: Unicode.Scalar) -> Bool {
        if isControl(scalar) { return true }
        switch scalar.value {
        // Bidi embeddings/overrides/isolates, line/paragraph separators, BOM.
        case 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069, 0x2028, 0x2029, 0xFEFF: return true
        default: return false
        }
    }

    /// C0, DEL and C1: escaped wherever a path is shown (a library path may
    /// contain only tab, line feed and carriage return of them, see `LibraryPath`).
    package static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }
}
