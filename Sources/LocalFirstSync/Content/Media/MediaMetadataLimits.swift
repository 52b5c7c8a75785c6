/// Hard caps for every size and count read from a media file.
///
/// Media files come from anywhere (cameras, messengers, downloads, peers), so a
/// field is never trusted to size an allocation or a loop. The caps sit far
/// above anything a real camera writes and far below anything that could hurt.
enum MediaMetadataLimits {
    /// Largest single read from a file; also the largest box payload we load.
    static let maxSingleRead = 4 << 20
    /// Largest Exif blob assembled from HEIF item extents.
    static let maxExifBytes = 4 << 20
    /// Boxes visited in one container before we give up (real files have tens).
    static let maxBoxesPerContainer = 4096
    /// Entries examined in a TIFF IFD (Apple MakerNotes hold about 60).
    static let maxIFDEntries = 4096
    /// Items examined in `iinf` / `iloc` (grid HEICs hold a few hundred).
    static let maxItems = 65_536
    /// Extents of one HEIF item.
    static let maxExtentsPerItem = 1024
    /// Keys examined in a QuickTime `keys` box.
    static let maxKeys = 4096
    /// JPEG marker segments (and fill bytes) examined before the scan starts.
    static let maxJPEGSegments = 1024
    /// Longest content identifier we accept (Apple's are 36-character UUIDs).
    static let maxIdentifierBytes = 256
    /// HEIF `Exif` items tried before giving up.
    static let maxExifItems = 16
}
