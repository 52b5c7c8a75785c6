/// Classification by file extension (case-insensitive), used by grouping and listings.
package enum MediaType: Sendable, Hashable {
    case stillImage
    case video
    case raw
    case sidecar
    case other

    public init(path: String) {
        switch Self.lowercasedExtension(of: path) {
        case "heic", "heif", "jpg", "jpeg", "png", "gif", "tif", "tiff", "webp", "avif": self = .stillImage
        case "mov", "mp4", "m4v", "avi", "mkv", "3gp": self = .video
        case "dng", "cr2", "cr3", "nef", "nrw", "arw", "raf", "orf", "rw2", "pef", "srw", "x3f", "erf", "kdc": self = .raw
        case "aae", "xmp": self = .sidecar
        default: self = .other
        }
    }

    /// Stills and videos: the kinds whose files are searched for a Live Photo identifier.
    public var mayCarryContentIdentifier: Bool {
        switch self {
        case .stillImage, .video: true
        case .raw, .sidecar, .other: false
        }
    }

    /// The text after the last dot of the last path component, lowercased; "" when none.
    /// Asked once per file scanned or received, so the usual case — a short
    /// ASCII extension — is found and lowercased on the bytes, from the end.
    public static func lowercasedExtension(of path: String) -> String {
        let bytes = path.utf8
        var end = bytes.endIndex
        // A trailing slash names the component before it.
        while end > bytes.startIndex, bytes[bytes.index(before: end)] == UInt8(ascii: "/") { end = bytes.index(before: end) }
        var cursor = end
        while cursor > bytes.startIndex {
            let previous = bytes.index(before: cursor)
            let byte = bytes[previous]
            if byte == UInt8(ascii: "/") { return "" }
            if byte == UInt8(ascii: ".") {
                // A leading dot starts a hidden name, not an extension.
                guard previous > bytes.startIndex, bytes[bytes.index(before: previous)] != UInt8(ascii: "/") else { return "" }
                // Written in place: an extension this short is a small string, no allocation.
                let ascii = bytes[cursor..<end]
                return String(unsafeUninitializedCapacity: ascii.count) { buffer in
                    for (index, byte) in ascii.enumerated() {
                        buffer[index] = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
                    }
                    return ascii.count
                }
            }
            guard byte < 0x80 else { return slowLowercasedExtension(of: path) }
            cursor = previous
        }
        return ""
    }

    /// Any script: Unicode lowercasing of what follows the last dot.
    private static func slowLowercasedExtension(of path: String) -> String {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return name[name.index(after: dot)...].lowercased()
    }
}
