/// The grouper's working record for one candidate: the path split once into
/// the parts the pairing rules compare.
///
/// Names are compared as bytes (`NameKey`), like every path in lfsync: two
/// spellings of one name in different Unicode normalisations are two files,
/// and pairing must not depend on which of them a hash table met first.
struct GroupingFile {
    package let path: RelativePath
    /// Everything before the last "/" ("" at the library root). Computed: the
    /// scanner hands over one directory at a time and never asks.
    package var directory: RelativePath { path.directory }
    /// The last path component.
    package let name: String
    /// `name` without its last extension, lowercased: the key for
    /// case-insensitive "same basename" rules (IMG_0001.HEIC ~ img_0001.mov).
    package let stemKey: NameKey
    /// Lowercased extension without the dot, "" when none.
    package let fileExtension: String
    package let mediaType: MediaType
    package let contentIdentifier: String?

    package init(_ candidate: GroupingCandidate) {
        path = candidate.path
        name = path.name
        fileExtension = MediaType.lowercasedExtension(of: name)
        stemKey = NameKey(Self.stem(of: name).lowercased())
        mediaType = MediaType(path: name)
        contentIdentifier = candidate.contentIdentifier
    }

    /// `name` without its last extension; a leading dot (".hidden") is not one.
    package static func stem(of name: String) -> String {
        guard let dot = name.utf8.lastIndex(of: UInt8(ascii: ".")), dot != name.utf8.startIndex else { return name }
        return String(name[..<dot])
    }
}

/// A file name (or part of one) as a dictionary key that compares by bytes,
/// as `RelativePath` does (a short name is stored inline: no allocation).
struct NameKey: Hashable {
    private let bytes: RelativePath

    package init(_ text: String) {
        bytes = RelativePath(text)
    }
}
