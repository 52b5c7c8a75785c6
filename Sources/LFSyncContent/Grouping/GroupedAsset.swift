/// The files that travel and land as one asset, with their roles.
///
/// Exactly one member is `.primary`. Members are ordered by role (primary,
/// Live Photo video, raw, sidecars), ties by path bytes.
package struct GroupedAsset: Sendable, Hashable {
    public struct Member: Sendable, Hashable {
        public var path: RelativePath
        public var role: FileRole

        public init(path: RelativePath, role: FileRole) {
            self.path = path
            self.role = role
        }
    }

    public var members: [Member]

    /// Sorts `members` into the canonical order.
    public init(members: [Member]) {
        self.members = members.sorted { ($0.role.rawValue, $0.path) < ($1.role.rawValue, $1.path) }
    }

    /// Path of the primary member (the first member, by the ordering above).
    public var primaryPath: RelativePath {
        members.first(where: { $0.role == .primary })?.path ?? members.first?.path ?? ""
    }
}
