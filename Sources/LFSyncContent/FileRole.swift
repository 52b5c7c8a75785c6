/// What a file is *for* inside an asset. The raw values are part of the
/// content ID encoding and the wire format: never renumber them.
public enum FileRole: UInt8, Sendable, Hashable, CaseIterable, Codable, CustomStringConvertible {
    /// The image or document the asset is about (the still of a Live Photo, the JPEG of a RAW+JPEG pair).
    case primary = 1
    /// The motion part of a Live Photo.
    case livePhotoVideo = 2
    /// The camera RAW of a RAW+JPEG pair. A RAW on its own is the `primary` of its asset.
    case raw = 3
    /// Edit instructions and metadata (.AAE, .xmp) that belong to the primary.
    case sidecar = 4

    public var description: String {
        switch self {
        case .primary: "primary"
        case .livePhotoVideo: "livePhotoVideo"
        case .raw: "raw"
        case .sidecar: "sidecar"
        }
    }

}
