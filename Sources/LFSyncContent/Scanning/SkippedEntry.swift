/// A path the scanner saw but did not turn into an asset, and why; shown to
/// the user so nothing is left out silently.
public struct SkippedEntry: Hashable, Sendable, Codable {
    public var path: RelativePath
    public var reason: String

    public init(path: RelativePath, reason: String) {
        self.path = path
        self.reason = reason
    }
}
