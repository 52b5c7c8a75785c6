/// Classification by file extension (case-insensitive), used by grouping and listings.
public enum MediaType: Sendable, Hashable {
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

    /// The text after the last dot of the last path component, lowercased; "" when none.
    public static func lowercasedExtension(of path: String) -> String {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return name[name.index(after: dot)...].lowercased()
    }
}
