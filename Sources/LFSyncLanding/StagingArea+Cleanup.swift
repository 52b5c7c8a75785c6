#if canImport(Glibc)
import Glibc
#endif
import LFSyncCrypto
import LFSyncSystem
import LFSyncStore

/// Removing partials nobody is using, so that the staging area cannot grow
/// without bound (see `StagingPolicy` for the numbers and why).
///
/// "Nobody" means no live `IncomingFile` of this process holds the content's
/// lock (`PartialLocks`): a transfer in progress, however idle, never loses
/// its partial. Each removal re-checks that under the registry's lock, so a
/// transfer cannot adopt a partial while it is being removed. "Touched" is
/// the partial's mtime: every write moves it, and so does adopting it.
///
/// Staged files are left alone: while the process runs each belongs to a
/// transfer, and those a crash left behind are partials again once
/// `recoverInterruptedFiles()` has run.
extension StagingArea {
    /// What a clean-up removed.
    package struct Removal: Equatable, Sendable {
        var files = 0
        /// Bytes the removed files took on disk (allocated blocks: partials are sparse).
        var bytes: UInt64 = 0
    }

    /// A partial that no live transfer held when the directory was read.
    fileprivate struct Unheld {
        let fileHash: Hash256
        let name: String
        let status: FileStatus
        /// Allocated on disk.
        let bytes: UInt64
    }

    /// The clean-up with the policy's limit for this file system: what the
    /// importer runs when it opens.
    @discardableResult
    package func removeUnusedPartials(now: Int64) throws(ReceiveError) -> Removal {
        let space = try library.space()
        return try removeUnusedPartials(now: now, keepingAtMost: StagingPolicy.unheldPartialLimit(fileSystemBytes: space.total))
    }

    /// Removes partials that no live transfer holds:
    /// 1. each one not touched for `StagingPolicy.idleLimitNs` before `now`;
    /// 2. then, least recently touched first, while the others take more than
    ///    `limit` bytes on disk, or until `bytesToFree` bytes are freed — the
    ///    latter only when removing every one of them could free that much, so
    ///    that no resumable partial is lost for a plan refused anyway.
    /// - Parameter now: nanoseconds since 1970 (injectable: tests need no sleeping).
    @discardableResult
    package func removeUnusedPartials(now: Int64, keepingAtMost limit: UInt64, freeing bytesToFree: UInt64 = 0) throws(ReceiveError) -> Removal {
        var removal = Removal()
        var kept: [Unheld] = []
        for partial in try unheldPartials() {
            let (idle, overflow) = now.subtractingReportingOverflow(partial.status.modificationTimeNs)
            if !overflow, idle >= StagingPolicy.idleLimitNs {
                if remove(partial) { removal.add(partial) }
            } else {
                kept.append(partial)
            }
        }
        kept.sort { $0.status.modificationTimeNs < $1.status.modificationTimeNs }
        var keptBytes = kept.reduce(UInt64(0)) { $0 + $1.bytes }
        let stillToFree = bytesToFree > removal.bytes ? bytesToFree - removal.bytes : 0
        let freeForSpace = stillToFree > 0 && keptBytes >= stillToFree
        for partial in kept {
            guard keptBytes > limit || (freeForSpace && removal.bytes < bytesToFree) else { break }
            // Removed, or taken by a transfer meanwhile: either way it no longer counts.
            keptBytes -= partial.bytes
            if remove(partial) { removal.add(partial) }
        }
        return removal
    }

    /// The room a plan may use, once the policy's reserve is left free and
    /// the bytes promised to accepted transfers (`promisedSpace`) are set aside.
    package struct Room: Equatable, Sendable {
        /// Free on the file system, less what is promised.
        package var available: UInt64
        /// Kept free for everything else (`StagingPolicy.reserve`).
        package var reserve: UInt64

        /// Bytes a plan may add.
        package var usable: UInt64 { available > reserve ? available - reserve : 0 }

        package func refusal(needing bytes: UInt64) -> ReceiveError {
            .insufficientSpace(needed: bytes, available: available, reserved: reserve)
        }
    }

    /// Checks that a plan adding `bytes` leaves the policy's reserve free,
    /// after the clean-up — which, when the plan would not fit otherwise,
    /// also removes unheld partials (least recently touched first) if that
    /// makes room. A plan that adds nothing is never refused.
    /// - Throws: `.insufficientSpace` when the plan does not fit.
    package func makeRoom(for bytes: UInt64, now: Int64) throws(ReceiveError) {
        try makeRoom(for: bytes, now: now, measuring: library.space)
    }

    /// `makeRoom(for:now:)` with the file system's room measured by `measure`
    /// (tests: a file system of any size).
    package func makeRoom(
        for bytes: UInt64, now: Int64, measuring measure: () throws(ReceiveError) -> LibraryDirectory.Space
    ) throws(ReceiveError) {
        let room = try room(toFit: bytes, now: now, measuring: measure)
        guard bytes == 0 || bytes <= room.usable else { throw room.refusal(needing: bytes) }
    }

    /// The room for new bytes after the clean-up, which removes unheld partials
    /// (least recently touched first) when that lets `bytes` fit.
    package func room(
        toFit bytes: UInt64, now: Int64, measuring measure: () throws(ReceiveError) -> LibraryDirectory.Space
    ) throws(ReceiveError) -> Room {
        var space = try measure()
        let reserve = StagingPolicy.reserve(fileSystemBytes: space.total)
        let promised = promisedSpace.total
        let (sum, overflow) = bytes.addingReportingOverflow(reserve)
        let (needed, overflowAgain) = (overflow ? .max : sum).addingReportingOverflow(promised)
        let wanted = bytes == 0 ? 0 : overflowAgain ? .max : needed
        let removal = try removeUnusedPartials(
            now: now, keepingAtMost: StagingPolicy.unheldPartialLimit(fileSystemBytes: space.total),
            freeing: wanted > space.available ? wanted - space.available : 0)
        if removal.files > 0 { space = try measure() }
        return Room(available: space.available - min(space.available, promised), reserve: reserve)
    }

    /// The partials in the directory that no live transfer holds, with their
    /// status and size on disk. Directories under such a name are skipped.
    private func unheldPartials() throws(ReceiveError) -> [Unheld] {
        try entryNames().compactMap { name in
            guard let hash = Self.fileHash(ofPartialNamed: name),
                  !partialLocks.isHeld(hash)
            else { return nil }
            var raw = stat()
            guard fstatat(directory.rawValue, name, &raw, AT_SYMLINK_NOFOLLOW) == 0 else { return nil }
            let status = FileStatus(raw)
            guard status.kind != .directory else { return nil }
            return Unheld(fileHash: hash, name: name, status: status, bytes: UInt64(max(0, raw.st_blocks)) * 512)
        }
    }

    /// Removes `partial` if still no live transfer holds it and it is still
    /// the file that was judged (not written, adopted or replaced since).
    private func remove(_ partial: Unheld) -> Bool {
        let removed = partialLocks.unlessHeld(partial.fileHash) { () -> Bool in
            guard let current = try? directory.statusOfEntry(named: partial.name, Self.displayPath(of: partial.name)),
                  FileIdentity(current) == FileIdentity(partial.status),
                  current.modificationTimeNs == partial.status.modificationTimeNs
            else { return false }
            return unlinkat(directory.rawValue, partial.name, 0) == 0
        }
        return removed == true
    }
}

extension StagingArea.Removal {
    fileprivate mutating func add(_ partial: StagingArea.Unheld) {
        files += 1
        bytes += partial.bytes
    }
}
