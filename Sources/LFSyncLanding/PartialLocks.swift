import Synchronization
import LFSyncCrypto
import LFSyncSystem
import LFSyncStore

/// The `PartialLock` of every content that some live `IncomingFile` of this
/// process is receiving, with how many hold it. One per `StagingArea`, and
/// so one per process and library (`LocalSync` opens one importer for all
/// its peer sessions).
///
/// Also the answer to "does a live transfer own this partial?" for the
/// staging clean-up: a partial is only removed while nobody holds its lock,
/// under this registry's own lock, so no transfer can adopt it meanwhile.
final class PartialLocks: Sendable {
    private struct Entry {
        let lock: PartialLock
        var holders: Int
    }

    private let entries = LockedState<[Hash256: Entry]>([:])

    /// The lock of `fileHash`'s partial; the caller holds it until `release`.
    package func acquire(_ fileHash: Hash256) -> PartialLock {
        entries.withLock { entries in
            if var entry = entries[fileHash] {
                entry.holders += 1
                entries[fileHash] = entry
                return entry.lock
            }
            let lock = PartialLock()
            entries[fileHash] = Entry(lock: lock, holders: 1)
            return lock
        }
    }

    package func release(_ fileHash: Hash256) {
        entries.withLock { entries in
            guard var entry = entries[fileHash] else { return }
            entry.holders -= 1
            entries[fileHash] = entry.holders > 0 ? entry : nil
        }
    }

    /// Whether some live `IncomingFile` holds `fileHash`'s lock.
    package func isHeld(_ fileHash: Hash256) -> Bool {
        entries.withLock { $0[fileHash] != nil }
    }

    /// Runs `body` only if no live `IncomingFile` holds `fileHash`'s lock,
    /// and keeps any from taking it until `body` returns.
    /// - Returns: `body`'s result, or nil when the partial is held.
    package func unlessHeld<T: Sendable, E: Error>(_ fileHash: Hash256, _ body: () throws(E) -> T) throws(E) -> T? {
        try entries.withLock { (entries: inout sending [Hash256: Entry]) throws(E) -> T? in
            entries[fileHash] == nil ? try body() : nil
        }
    }
}
