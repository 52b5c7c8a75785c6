/// One library file as the grouper sees it: where it is and, when the file
/// carries one, the Apple Live Photo content identifier read from its metadata.
public struct GroupingCandidate: Sendable, Hashable {
    public var path: RelativePath
    /// From `AppleContentIdentifierReader`; nil when absent or unreadable.
    public var contentIdentifier: String?

    public init(path: RelativePath, contentIdentifier: String? = nil) {
        self.path = path
        self.contentIdentifier = contentIdentifier
    }
}
