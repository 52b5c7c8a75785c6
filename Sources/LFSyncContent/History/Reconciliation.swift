import LFSyncCrypto

/// What a device does with another device's version of a path, given its own: one pure
/// function, the same on every device (PROTOCOL.md, "Path versions"), whose safety rule is
/// Unison's — never overwrite a change you did not see. A version that descends from ours
/// replaces it (a fast-forward; what it replaces is kept in the versions area); one ours
/// descends from changes nothing; two made concurrently keep both, the winner at the path
/// and the other beside it as a conflict copy — the same winner, and the same copy name,
/// on every device, so conflict copies converge too.
package enum Reconciliation {
    package enum Action: Hashable, Sendable {
        /// Nothing here changes: the two are equal, or ours descends from theirs.
        case keep
        /// Same content (both deleted, or the same bytes): record `version`, whose vector
        /// has seen both; the disk is left as it is.
        case adopt(PathVersion)
        /// A fast-forward to their file: put it at the path (fetched, or from bytes already
        /// here), ours — if any — kept in the versions area.
        case take(PathVersion)
        /// A fast-forward to their deletion: our file moves to the versions area.
        case delete(PathVersion)
        /// Their deletion, which this device does not apply (it keeps what it received, as an
        /// archive does, until told to mirror): `version` is recorded so the deletion is not
        /// undone by this device, and the file stays.
        case retain(PathVersion)
        /// Concurrent changes of two files: the path gets `keep` (their file if `takeTheirs`,
        /// else ours, which stays), and the loser's bytes go beside it as a new path
        /// (`conflictPath(of:loser:)`).
        case conflict(keep: PathVersion, takeTheirs: Bool, loser: PathVersion)
    }

    /// - Parameters:
    ///   - ours: this device's version of the path (nil: it never had the path).
    ///   - theirs: the other device's.
    ///   - deletionsAllowed: whether a deletion by that device is applied here.
    ///   - device: this device's short ID. Resolving two concurrent versions of different
    ///     content makes a new version, by this device: its vector has seen both *and* one
    ///     change more, so that no two devices can reach one vector with two contents (a
    ///     merge alone would: an edit kept over a deletion here, two deletions merged there).
    package static func decide(ours: PathVersion?, theirs: PathVersion, deletionsAllowed: Bool, device: UInt64) -> Action {
        guard let ours else {
            // A path new here: a file is taken, a deletion only recorded (nothing to delete).
            return theirs.isDeleted ? .adopt(theirs) : .take(theirs)
        }
        let merged = ours.vector.merged(with: theirs.vector)
        switch ours.vector.compared(to: theirs.vector) {
        case .equal, .newer:
            return .keep
        case .older:
            if ours.content == theirs.content { return .adopt(theirs) }
            if theirs.isDeleted { return deletionsAllowed ? .delete(theirs) : .retain(theirs) }
            return .take(theirs)
        case .concurrent:
            let winner = PathVersion.winner(of: ours, theirs)
            var kept = winner
            kept.vector = merged
            // The same bytes, or both deleted: nothing conflicts, and the merge names them.
            if ours.content == theirs.content { return .adopt(kept) }
            kept.vector = merged.incremented(by: device)
            // A deletion against an edit: the edit wins, and nothing is copied aside. (Its version
            // is a new one that has seen the deletion: taking theirs as it is would drop this
            // device's own counter for the path, and its next change would reuse a number.)
            if ours.isDeleted || theirs.isDeleted {
                return winner == theirs ? .take(kept) : .adopt(kept)
            }
            let loser = winner == theirs ? ours : theirs
            return .conflict(keep: kept, takeTheirs: winner == theirs, loser: loser)
        }
    }

    /// Where a conflict's losing file goes: `NAME (conflict XXXXXXXX).EXT`, named by the
    /// loser's file hash — so every device that resolves the same conflict makes the same
    /// copy, and the copies converge like any path.
    package static func conflictPath(of path: RelativePath, loser: PathVersion) -> RelativePath {
        guard let hash = loser.fileHash else { return path }
        let components = path.string.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        let name = ConflictName.make(components.last ?? path.string, tag: String(hash.hex.prefix(8)))
        return RelativePath((components.dropLast() + [name]).joined(separator: "/"))
    }
}
