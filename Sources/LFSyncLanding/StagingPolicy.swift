import LFSyncStore
/// How long the staging area keeps what no transfer holds, how much of it,
/// and how much room a plan must leave free. Receiver behaviour a peer can
/// notice (a resume may start over), so PROTOCOL.md's receiver rules and the
/// README state the same numbers.
enum StagingPolicy {
    /// A partial that no live transfer holds, and that nobody has written to
    /// or adopted for this long, is removed: a day covers an interrupted
    /// transfer retried later the same day or the next, without letting
    /// abandoned ones pile up for ever.
    package static let idleLimitNs: Int64 = 24 * 3600 * 1_000_000_000

    /// The most bytes (on disk) that partials no live transfer holds may take:
    /// max(1 GiB, 10% of the file system). Beyond it the least recently
    /// touched go first, whatever their age — otherwise a consented peer could
    /// fill the disk with "all but the last chunk, then Cancel", file after file.
    package static func unheldPartialLimit(fileSystemBytes: UInt64) -> UInt64 {
        max(1 << 30, fileSystemBytes / 10)
    }

    /// Room a plan leaves free for everything else on the file system (the
    /// library's own index, the system, other programs): 1% of it, at most
    /// 1 GiB. An offer that would eat into it is refused.
    package static func reserve(fileSystemBytes: UInt64) -> UInt64 {
        min(1 << 30, fileSystemBytes / 100)
    }
}
