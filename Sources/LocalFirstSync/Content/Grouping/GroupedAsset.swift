/// The files that travel and land as one asset, with their roles.
///
/// Exactly one member is `.primary`. Members are ordered primary, raw, Live
/// Photo video, sidecars (ties by path), the same order `Asset` uses.
public struct GroupedAsset: Sendable, Hashable {
    public struct Member: Sendable, Hashable {
        public var path: String
        public var role: FileRole

        public init(path: String, role: FileRole) {
            self.path = path
            self.role = role
        }
    }

    public var members: [Member]

    /// Sorts `members` into the canonical order.
    public init(members: [Member]) {
        self.members = members.sorted { ($0.role.sortRank, $0.path) < ($1.role.sortRank, $1.path) }
    }

    /// Path of the primary member (the first member, by the ordering above).
    public var primaryPath: String {
        members.first(where: { $0.role == .primary })?.path ?? members.first?.path ?? ""
    }
}
