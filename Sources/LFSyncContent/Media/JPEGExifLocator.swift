/// Finds the Exif TIFF data of a JPEG: the first APP1 segment that starts with
/// "Exif\0\0", searched from SOI up to the start of scan (SOS), after which no
/// metadata segments are defined.
enum JPEGExifLocator {
    package static let exifHeader = Array("Exif\0\0".utf8)

    /// The TIFF bytes (after "Exif\0\0"), or nil when there is no Exif segment.
    package static func exifTIFF<Source: MediaByteSource>(in source: Source) throws(MediaMetadataError) -> MediaByteView? {
        guard source.size >= 2, try source.view(at: 0, length: 2).hasPrefix([0xFF, 0xD8]) else {
            throw .malformed("JPEG without SOI")
        }
        var position: UInt64 = 2
        for _ in 0..<MediaMetadataLimits.maxJPEGSegments {
            let marker = try source.view(at: position, length: 2)
            guard try marker.uint8(at: 0) == 0xFF else { throw .malformed("JPEG marker expected at \(position)") }
            let code = try marker.uint8(at: 1)
            switch code {
            case 0xFF:
                position += 1 // fill byte before a marker
                continue
            case 0xDA, 0xD9:
                return nil // start of scan or end of image: no Exif ahead of the image data
            case 0x01, 0xD0...0xD7:
                position += 2 // standalone markers carry no length
                continue
            case 0x00, 0xD8:
                throw .malformed("JPEG marker 0x\(String(code, radix: 16)) outside entropy-coded data")
            default:
                break
            }
            let segmentLength = Int(try source.view(at: position + 2, length: 2).uint16(at: 0))
            guard segmentLength >= 2 else { throw .malformed("JPEG segment length \(segmentLength)") }
            let payloadOffset = position + 4
            let payloadLength = segmentLength - 2
            if code == 0xE1, payloadLength >= exifHeader.count,
               try source.view(at: payloadOffset, length: exifHeader.count).hasPrefix(exifHeader) {
                let payload = try source.view(at: payloadOffset, length: payloadLength)
                return try payload.subview(at: exifHeader.count)
            }
            position += 2 + UInt64(segmentLength) // at most 2 + 65535 per step; cannot overflow
        }
        throw .overLimit("more than \(MediaMetadataLimits.maxJPEGSegments) JPEG segments before the scan")
    }
}
