#if canImport(Glibc)
import Glibc
#endif
internal import CLinux
import Synchronization
import LFSyncContent
import LFSyncCrypto
import LFSyncSystem
import LFSyncStore

/// `<library>/.lfsync/staging/`: the only place incoming bytes are written
/// before they are complete and verified (ARCHITECTURE.md, "Receiver safety"). Inside the library
/// so that installing is a rename on one file system, never a copy.
///
/// Names in it, all derived from content, none from the wire:
/// - `<fileHash hex>.partial` — a file being received. Keyed by content, so a
///   resumed or repeated offer of the same file finds the chunks already
///   there (`IncomingFile.verifiedChunks`).
/// - `<fileHash hex>.<random>.staged` — a finished, verified file waiting to
///   be installed; private to the `StagedFile` that names it.
///
/// **Sharing.** Two assets (or two peers) sending the same file share its
/// partial: each writes only bytes it has verified against the chunk hash, at
/// the offset the content fixes, so interleaved writers store identical bytes
/// and cannot corrupt each other. The first to `verify()` renames the partial
/// to its private `.staged` name before reading it back; the other's next
/// write sees the partial gone (it compares the inode behind the name with
/// its own) and throws `.partialTaken` instead of writing into a file that is
/// no longer a partial — it reopens, and copies the chunks locally from the
/// file the first one installed. Every operation on a content's partial, from
/// any thread of the process, holds that content's `PartialLock` (kept in
/// `partialLocks`): a write cannot slip in between another transfer's check
/// and its use of the partial, nor land in a file `verify()` has vouched for.
///
/// A manifest can lie, though: one that claims this file hash with another
/// size or chunk list would cut or overwrite the partial with bytes that pass
/// *its* chunk hashes. So whoever opens an existing partial first marks it
/// shared (in the `PartialLock`'s state, not on the file), and a shared
/// partial is read back whole before its file hash is trusted; only a
/// partial its creator had to itself is checked with the hash computed while
/// the chunks arrived.
///
/// The locks and marks are this process's: two processes receiving into one
/// library at once do not see each other's (`LocalSync` runs every peer
/// session of a process through one importer, and so one staging area).
///
/// **Clean-up.** Partials outlive the transfers that wrote them (that is how
/// a transfer resumes), so the staging area would otherwise only grow — by a
/// cancelled or failed transfer, or on purpose: a consented peer could send
/// all but the last chunk of file after file. What no live transfer holds is
/// removed by age and by size (see `StagingPolicy`,
/// `removeUnusedPartials(now:keepingAtMost:freeing:)`).
package final class StagingArea: Sendable {
    package let library: LibraryDirectory
    package let directory: OwnedDescriptor
    /// The lock of each content some live `IncomingFile` is receiving here.
    let partialLocks = PartialLocks()
    /// What accepted transfers still have to write here: room already given away.
    package let promisedSpace = PromisedSpace()
    private let tokenSeed = UInt64.random(in: 0 ... .max)
    private let tokensUsed = Atomic<UInt64>(0)

    package static let directoryName = "staging"
    /// For messages: where the staging directory is, relative to the library.
    package static let displayPath = LibraryLayout.stateDirectoryName + "/" + directoryName

    /// Opens (creating, mode 0700) `.lfsync/staging` through the library's
    /// descriptor. `.lfsync` or `staging` being a symlink is refused:
    /// otherwise partials could be written wherever it points. Either one
    /// owned by another user is refused too, and one of ours that others may
    /// enter or write is made 0700 again: in a library another local user can
    /// write to, that user could otherwise pre-create a 0777 `staging/` and
    /// read every incoming photo, or plant the partial it is written into.
    package init(library: LibraryDirectory) throws(ReceiveError) {
        self.library = library
        let (state, _) = try library.openChildDirectory(
            of: library.root, named: LibraryLayout.stateDirectoryName, create: 0o700,
            displayPath: LibraryLayout.stateDirectoryName)
        try Self.keepPrivate(state, displayPath: LibraryLayout.stateDirectoryName)
        (directory, _) = try library.openChildDirectory(
            of: state, named: Self.directoryName, create: 0o700, displayPath: Self.displayPath)
        try Self.keepPrivate(directory, displayPath: Self.displayPath)
    }

    /// Ours alone: owned by this user, no access for group or others.
    private static func keepPrivate(_ directory: OwnedDescriptor, displayPath: String) throws(ReceiveError) {
        let status = try ReceiveError.system { () throws(SystemError) in try directory.status(displayPath) }
        let user = UInt32(geteuid())
        guard status.owner == user else { throw .unsafeStaging(path: displayPath, owner: status.owner, user: user) }
        if status.permissions & 0o7077 != 0 {
            guard fchmod(directory.rawValue, 0o700) == 0 else { throw .system(SystemError.current("chmod", path: displayPath)) }
        }
    }

    package static func partialName(for fileHash: Hash256) -> String { fileHash.hex + partialSuffix }

    /// The content hash a partial's name stands for; nil for any other name.
    package static func fileHash(ofPartialNamed name: String) -> Hash256? {
        guard name.hasSuffix(partialSuffix) else { return nil }
        return Hash256(hex: String(name.dropLast(partialSuffix.count)))
    }

    private static let partialSuffix = ".partial"

    /// Makes everything written to the library's file system durable: one
    /// barrier for a whole group of received files (their data and mtimes
    /// before they are renamed into place, the renames before their receipts),
    /// where an fsync per file and per directory cost a disk flush each.
    package func syncFileSystem() throws(ReceiveError) {
        guard lfsync_syncfs(directory.rawValue) == 0 else {
            throw .system(SystemError.current("syncfs", path: Self.displayPath))
        }
    }

    /// A name nobody else will pick: the token keeps two finished copies of
    /// the same content (say, with different mtimes) apart. Tokens count up
    /// from a random start — a `getrandom` per received file showed in
    /// profiles — and a name left over from another run is caught where the
    /// name is taken (no-replace rename, `O_EXCL`).
    package func stagedName(for fileHash: Hash256) -> String {
        let token = tokenSeed &+ tokensUsed.add(1, ordering: .relaxed).oldValue
        // "<file hash>.<token, 16 digits>.staged", written in place: one per received file.
        let suffix = ".staged".utf8
        return String(unsafeUninitializedCapacity: 64 + 1 + 16 + suffix.count) { buffer in
            var position = fileHash.writeHex(into: buffer)
            buffer[position] = UInt8(ascii: ".")
            position += 1
            position += Hash256.writeHex(token, digits: 16, into: UnsafeMutableBufferPointer(rebasing: buffer[position...]))
            for byte in suffix {
                buffer[position] = byte
                position += 1
            }
            return position
        }
    }

    package static func displayPath(of name: String) -> String { displayPath + "/" + name }

    /// Deletes the partial of `fileHash`, if any, unless a live transfer of
    /// this process holds it.
    /// - Returns: false when a live transfer holds it (it is left alone).
    @discardableResult
    package func removePartial(fileHash: Hash256) throws(ReceiveError) -> Bool {
        let name = Self.partialName(for: fileHash)
        let removed = try partialLocks.unlessHeld(fileHash) { () throws(ReceiveError) -> Bool in
            guard unlinkat(directory.rawValue, name, 0) == 0 || errno == ENOENT else {
                throw .system(SystemError.current("unlink", path: Self.displayPath(of: name)))
            }
            return true
        }
        return removed == true
    }

    /// Content hashes of the partials present, for status and clean-up.
    package func partialFileHashes() throws(ReceiveError) -> [Hash256] {
        try entryNames().compactMap(Self.fileHash(ofPartialNamed:))
    }

    /// After a crash, turns finished-but-not-installed files (`.staged`, left
    /// when the process died between `verify()` and the install, or after a
    /// failed rollback) back into partials, so the next offer of that content
    /// finds every chunk verified instead of leaving them orphaned. Call once
    /// at start-up, before any transfer.
    ///
    /// A staged file's mtime is already its placement's (years old, for a
    /// photo); the partial it becomes gets the time it was last touched — its
    /// last status change, when that mtime was set — so the clean-up ages it
    /// from when the transfer stopped, not from when the photo was taken.
    /// - Returns: how many files were recovered.
    @discardableResult
    package func recoverInterruptedFiles() throws(ReceiveError) -> Int {
        var recovered = 0
        for name in try entryNames() where name.hasSuffix(".staged") {
            let parts = name.split(separator: ".")
            guard parts.count == 3, let hash = Hash256(hex: String(parts[0])) else { continue }
            let touched = try? directory.statusOfEntry(named: name, Self.displayPath(of: name))?.changeTimeNs
            // Plain rename: a complete file is worth more than a partial of the same content.
            let partial = Self.partialName(for: hash)
            guard renameat(directory.rawValue, name, directory.rawValue, partial) == 0 else {
                throw .system(SystemError.current("rename", path: Self.displayPath(of: name)))
            }
            if let touched {
                // Best effort: failing, the partial only looks older than it is.
                try? StagedFile.setModificationTime(ofEntry: partial, in: directory, to: touched, Self.displayPath(of: partial))
            }
            recovered += 1
        }
        return recovered
    }

    package func entryNames() throws(ReceiveError) -> [String] {
        // A fresh descriptor of our own: readdir moves its file offset.
        let fd = openat(directory.rawValue, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0, let stream = fdopendir(fd) else {
            let error = SystemError.current("opendir", path: Self.displayPath)
            if fd >= 0 { close(fd) }
            throw .system(error)
        }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let raw = DirectoryEntryName.bytes(of: entry)
            if let name = String(validating: raw, as: UTF8.self), name != ".", name != ".." { names.append(name) }
        }
        return names
    }
}
