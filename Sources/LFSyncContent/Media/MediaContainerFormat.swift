/// The container formats that can carry an Apple content identifier.
package enum MediaContainerFormat: Sendable, Hashable {
    /// JPEG: Exif in an APP1 segment.
    case jpeg
    /// ISO base media file format and QuickTime: HEIC/HEIF (Exif item) and MOV/MP4 (`moov/meta`).
    case isoBaseMedia

    /// Bytes needed by `sniff`.
    package static let sniffLength = 8

    /// Recognises the format from the first bytes, because extensions lie
    /// (an iPhone export named .JPG that is really HEIC is common).
    package static func sniff(_ prefix: [UInt8]) -> MediaContainerFormat? {
        let view = MediaByteView(prefix)
        if view.hasPrefix([0xFF, 0xD8, 0xFF]) { return .jpeg }
        guard let size = try? view.uint32(at: 0), let type = try? view.uint32(at: 4) else { return nil }
        guard size == 0 || size == 1 || size >= 8 else { return nil }
        return FourCC.plausibleFirstBoxes.contains(FourCC(rawValue: type)) ? .isoBaseMedia : nil
    }
}
