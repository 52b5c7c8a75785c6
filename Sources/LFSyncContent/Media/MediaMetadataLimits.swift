/// Hard caps for every size and count read from a media file.
///
/// Media files come from anywhere (cameras, messengers, downloads, peers), so a
/// field is never trusted to size an allocation or a loop. The caps sit far
/// above anything a real camera writes and far below anything that could hurt.
package enum MediaMetadataLimits {
    /// Largest single read from a file; also the largest box payload we load.
    package static let maxSingleRead = 4 << 20
    /// Largest Exif blob assembled from HEIF item extents.
    package static let maxExifBytes = 4 << 20
    /// Boxes visited in one container before we give up (real files have tens).
    package static let maxBoxesPerContainer = 4096
    /// Entries examined in a TIFF IFD (Apple MakerNotes hold about 60).
    package static let maxIFDEntries = 4096
    /// Items examined in `iinf` / `iloc` (grid HEICs hold a few hundred).
    package static let maxItems = 65_536
    /// Extents of one HEIF item.
    package static let maxExtentsPerItem = 1024
    /// Keys examined in a QuickTime `keys` box.
    package static let maxKeys = 4096
    /// JPEG marker segments (and fill bytes) examined before the scan starts.
    package static let maxJPEGSegments = 1024
    /// Longest content identifier we accept (Apple's are 36-character UUIDs).
    package static let maxIdentifierBytes = 256
    /// HEIF `Exif` items tried before giving up.
    package static let maxExifItems = 16
}
