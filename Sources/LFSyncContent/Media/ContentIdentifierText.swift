/// Turns the raw bytes of a stored identifier into the string we compare.
///
/// TIFF ASCII values end in NUL (and some writers pad with more), QuickTime
/// UTF-8 values usually do not; cutting at the first NUL makes both agree.
enum ContentIdentifierText {
    /// The text before the first NUL; nil when empty, thrown when not UTF-8 or too long.
    package static func decode(_ raw: [UInt8]) throws(MediaMetadataError) -> String? {
        let text = raw.prefix { $0 != 0 }
        guard text.count <= MediaMetadataLimits.maxIdentifierBytes else {
            throw .overLimit("content identifier of \(text.count) bytes")
        }
        guard !text.isEmpty else { return nil }
        guard let string = String(validating: text, as: UTF8.self) else {
            throw .malformed("content identifier is not UTF-8")
        }
        return string
    }
}
