import Synchronization
import LFSyncSystem
import LFSyncStore

/// The one lock of a content's partial in this process, shared by every
/// `IncomingFile` of that file hash (handed out by `PartialLocks`), and what
/// those transfers must know about the partial, kept under it.
///
/// **Why a lock.** Two transfers of the same content — two offers, possibly
/// from two peers' sessions — write the same `<hash>.partial`, and one of
/// them finishes it on the install queue's thread while the other's session
/// is still writing. A write is "check that the name still leads to our
/// partial, maybe hash the chunk (up to 16 MiB), `pwrite`"; a finish is
/// "rename, read back and hash". Unserialised, a write that passed its check
/// before the rename could land after the read-back: bytes nobody verified in
/// a file `verify()` had just vouched for. Every write, adoption, verify and
/// discard of the partial runs under this lock, so once a finish has taken
/// the partial the other writer's check fails (`.partialTaken`) before it
/// writes anything.
///
/// **Why state of our own.** Whether the partial's creator still has it to
/// itself decides whether its chunks must be hashed one by one and whether
/// `verify()` may trust the file hash computed on the way in. That used to be
/// a mode bit on the file, which vfat, exFAT, NTFS, SMB and NFS mounts drop
/// or refuse. Kept here instead, it needs nothing from the file system, and
/// it need not outlive the process: after a restart the creator is gone, and
/// whoever opens the partial next adopts it — re-hashing every chunk and
/// reading the file back whole in `verify()` — whatever any mark said.
///
/// Held for whole operations (a read-back can take seconds for a large
/// file), but only transfers of the same content ever wait for each other.
final class PartialLock: Sendable {
    package struct State: Sendable {
        /// Moves on each time the partial stops being one here (finished, or
        /// deleted by its creator): an `IncomingFile` that joined an earlier
        /// generation no longer owns whatever the name leads to now, even if
        /// the file system gave the new partial the old one's inode number.
        var generation: UInt64 = 0
        /// The current partial's creator has it to itself: no other transfer
        /// opened it since it was created.
        var exclusive = false
    }

    private let state = LockedState(State())
    private let contentionHook = LockedState<(@Sendable () -> Void)?>(nil)

    package func withLock<T: Sendable, E: Error>(_ body: (inout State) throws(E) -> T) throws(E) -> T {
        if let result = try state.withLockIfAvailable({ (state: inout sending State) throws(E) -> T in try body(&state) }) {
            return result
        }
        contentionHook.withLock { $0 }?()
        return try state.withLock { (state: inout sending State) throws(E) -> T in try body(&state) }
    }

    /// Tests: `hook` runs each time a caller finds the lock taken, just before
    /// it waits — proof that an operation is blocked, without sleeping.
    package func onContentionForTesting(_ hook: @escaping @Sendable () -> Void) {
        contentionHook.withLock { $0 = hook }
    }
}
