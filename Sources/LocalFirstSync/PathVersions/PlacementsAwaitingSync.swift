import Synchronization
import LFSyncContent
import LFSyncCrypto

/// Paths that pushes a sync follows are placing in this library, each until that sync
/// has been applied (PROTOCOL.md, "Syncing").
///
/// Such a push offers what the sender's scan found; the sync after it carries the
/// sender's *versions*, which may be newer by then (a sync from a third device changed
/// the sender's file between its scan and its sync request). A file the push placed is
/// the sender's, not an edit made here: were it recorded as this device's own new
/// version before the sync came, the sync would find two concurrent versions and make a
/// conflict copy of what was never a conflict. So the recorders of this process leave a
/// path listed here alone while it has no history row; the sync takes or adopts it.
///
/// An entry goes when that peer's sync has been applied, when its connection ends (no
/// sync can follow), or after `limit` at the latest — then the file is recorded as any
/// new file is.
package final class PlacementsAwaitingSync: Sendable {
    private struct Entry {
        var peer: DeviceID
        var until: ContinuousClock.Instant
    }

    /// How long a placement waits for its sync at most.
    package static let limit: Duration = .seconds(600)

    private let entries = Mutex<[RelativePath: Entry]>([:])

    package init() {}

    /// `paths` are being placed by a push of `peer` that a sync follows.
    package func add(_ paths: some Sequence<RelativePath>, from peer: DeviceID, now: ContinuousClock.Instant = .now) {
        let until = now.advanced(by: Self.limit)
        entries.withLock { entries in
            for path in paths { entries[path] = Entry(peer: peer, until: until) }
        }
    }

    /// The paths still waiting for their sync.
    package func paths(now: ContinuousClock.Instant = .now) -> Set<RelativePath> {
        entries.withLock { entries in
            entries = entries.filter { $0.value.until > now }
            return Set(entries.keys)
        }
    }

    /// `peer`'s sync has been applied, or it can no longer come: its paths are let go.
    package func release(from peer: DeviceID) {
        entries.withLock { entries in entries = entries.filter { $0.value.peer != peer } }
    }
}
