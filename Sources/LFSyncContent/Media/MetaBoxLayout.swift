/// Finds where the children of a `meta` box start.
///
/// ISO 14496-12 makes `meta` a FullBox (4 bytes of version/flags before the
/// children); QuickTime's `meta` atom has no such field. Both occur in the wild,
/// sometimes for the same brand, so we look rather than assume: if the first
/// four bytes are followed by a known child type, they were a child's size.
enum MetaBoxLayout {
    package static func children(of payload: MediaByteView) throws(MediaMetadataError) -> MediaByteView {
        if payload.count >= 8,
           try payload.uint32(at: 0) >= 8,
           FourCC.plausibleMetaChildren.contains(FourCC(rawValue: try payload.uint32(at: 4))) {
            return payload
        }
        guard payload.count >= 4 else { throw .truncated("'meta' without version and flags") }
        return try payload.subview(at: 4)
    }
}
