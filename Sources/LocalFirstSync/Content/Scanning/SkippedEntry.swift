/// A path the scanner saw but did not turn into an asset, and why; shown to
/// the user so nothing is left out silently.
public struct SkippedEntry: Hashable, Sendable, Codable {
    public var path: String
    public var reason: String

    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }
}
