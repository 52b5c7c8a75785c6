import Foundation
import LFSyncSystem

/// Reads the identifier Apple stores in both halves of a Live Photo, so the
/// still and the video can be paired by content rather than by file name.
///
/// - HEIC/HEIF and JPEG: Apple Exif MakerNote, tag 0x0011.
/// - MOV/MP4: `moov/meta` key `com.apple.quicktime.content.identifier`.
///
/// Files are untrusted: every size, offset and count is checked before use,
/// reads are bounded (only box headers and the few small boxes we need are
/// loaded; an `mdat` of any size is skipped by seeking), and loops are capped.
/// A malformed file is reported as "no identifier", never as a crash.
package enum AppleContentIdentifierReader {
    /// The identifier of the file at `url`, or nil when it has none, is not a
    /// still image or video (by extension), or cannot be parsed.
    ///
    /// Only regular files are opened, without following a symlink (`O_NOFOLLOW`):
    /// a FIFO named like a photo would block the scan, a link could lead out of the library.
    package static func contentIdentifier(ofFileAt url: URL) -> String? {
        contentIdentifier(ofFileAtPath: url.path)
    }

    /// The same for a path given as it is on disk (no `URL` round trip, whose
    /// normalisation rules are not ours to rely on).
    package static func contentIdentifier(ofFileAtPath path: String) -> String? {
        guard MediaType(path: path).mayCarryContentIdentifier else { return nil }
        guard let file = try? ReadOnlyFile(path: path, nonBlocking: true),
              (try? file.status())?.kind == .regular,
              let source = try? FileMediaSource(file: file) else { return nil }
        return try? contentIdentifier(in: source, format: nil)
    }

    /// The identifier in a whole file's bytes as a file at `path` would have
    /// it (nil for a name that is not a still image or video): what a receiver
    /// that had the file in memory whole records, instead of reading it again.
    package static func contentIdentifier(path: String, wholeFile bytes: [UInt8]) -> String? {
        guard MediaType(path: path).mayCarryContentIdentifier else { return nil }
        return try? contentIdentifier(in: bytes, format: nil)
    }

    /// The same for bytes lent only for this call (a scanner's read buffer).
    package static func contentIdentifier(path: String, wholeFile bytes: UnsafeRawBufferPointer) -> String? {
        guard MediaType(path: path).mayCarryContentIdentifier else { return nil }
        return try? contentIdentifier(in: BorrowedMediaBytes(bytes), format: nil)
    }

    /// The identifier in a whole file's `bytes`; nil when the format is not
    /// recognised or the file has no identifier; throws when it is malformed.
    ///
    /// `format` skips sniffing; pass nil to detect it from the magic bytes.
    package static func contentIdentifier(in bytes: [UInt8], format: MediaContainerFormat? = nil) throws(MediaMetadataError) -> String? {
        try contentIdentifier(in: MediaByteView(bytes), format: format)
    }

    static func contentIdentifier<Source: MediaByteSource>(in source: Source, format: MediaContainerFormat?) throws(MediaMetadataError) -> String? {
        let resolved: MediaContainerFormat
        if let format {
            resolved = format
        } else {
            let prefixLength = Int(min(source.size, UInt64(MediaContainerFormat.sniffLength)))
            guard let sniffed = MediaContainerFormat.sniff(try source.read(at: 0, length: prefixLength)) else { return nil }
            resolved = sniffed
        }
        switch resolved {
        case .jpeg:
            guard let tiff = try JPEGExifLocator.exifTIFF(in: source),
                  let makerNote = try ExifMakerNoteLocator.makerNote(inTIFF: tiff) else { return nil }
            return try AppleMakerNote.contentIdentifier(in: makerNote)
        case .isoBaseMedia:
            var boxes = source.boxes()
            while let box = try boxes.next() {
                let identifier: String? = switch box.type {
                case .meta: try HEIFExifReader.contentIdentifier(meta: box, in: source)
                case .moov: try QuickTimeMetadataReader.contentIdentifier(moov: box, in: source)
                default: nil
                }
                if let identifier { return identifier }
            }
            return nil
        }
    }
}
