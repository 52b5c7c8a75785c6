/// The grouper's working record for one candidate: the path split once into
/// the parts the pairing rules compare.
struct GroupingFile {
    let path: String
    /// Everything before the last "/" ("" at the library root).
    let directory: String
    /// The last path component.
    let name: String
    /// `name` without its last extension, lowercased: the key for
    /// case-insensitive "same basename" rules (IMG_0001.HEIC ~ img_0001.mov).
    let stemKey: String
    /// Lowercased extension without the dot, "" when none.
    let fileExtension: String
    let mediaType: MediaType
    let contentIdentifier: String?

    init(_ candidate: GroupingCandidate) {
        path = candidate.path
        if let slash = path.lastIndex(of: "/") {
            directory = String(path[..<slash])
            name = String(path[path.index(after: slash)...])
        } else {
            directory = ""
            name = path
        }
        fileExtension = MediaType.lowercasedExtension(of: name)
        stemKey = Self.stem(of: name).lowercased()
        mediaType = MediaType(path: name)
        contentIdentifier = candidate.contentIdentifier
    }

    /// `name` without its last extension; a leading dot (".hidden") is not one.
    static func stem(of name: String) -> String {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return name }
        return String(name[..<dot])
    }
}
