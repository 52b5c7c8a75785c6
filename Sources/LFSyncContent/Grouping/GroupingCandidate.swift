/// One library file as the grouper sees it: where it is and, when the file
/// carries one, the Apple Live Photo content identifier read from its metadata.
package struct GroupingCandidate: Sendable, Hashable {
    package var path: RelativePath
    /// From `AppleContentIdentifierReader`; nil when absent or unreadable.
    package var contentIdentifier: String?

    package init(path: RelativePath, contentIdentifier: String? = nil) {
        self.path = path
        self.contentIdentifier = contentIdentifier
    }
}
