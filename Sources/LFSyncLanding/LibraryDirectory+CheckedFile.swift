#if canImport(Glibc)
import Glibc
#endif
import LFSyncContent
import LFSyncSystem
import LFSyncStore

/// The acts that delete or replace a file of the library — `offload`'s removal and
/// `verify --repair`'s replacement — each done on the file lfsync checked and on nothing
/// else (see `CheckedFile`): the folders on the way are opened through the library's
/// descriptor without following symlinks, the file itself with `O_NOFOLLOW`, compared with
/// the check on its open descriptor (`fstat`), its name checked to lead to that very inode,
/// and the act made through the parent folder's descriptor at once.
extension LibraryDirectory {
    /// The checked file, still unchanged, and the folder that holds it.
    package struct CheckedOpen {
        package let parent: OwnedDescriptor
        package let file: OwnedDescriptor
        package let status: FileStatus
    }

    /// What `openChecked(_:)` found at a checked file's name.
    package enum Found {
        case unchanged(CheckedOpen)
        case changed(FileChange)
    }

    /// Opens `checked` if it is still the file that was checked.
    /// - Returns: the open file, or how it changed (gone, replaced, edited).
    package func openChecked(_ checked: CheckedFile) throws(ReceiveError) -> Found {
        let path = checked.path
        let parent: OwnedDescriptor
        do { parent = try openDirectory(path.parentComponents, create: false).directory } catch {
            if case let .system(failure) = error, failure.errno == ENOENT { return .changed(.gone) }
            if case .notADirectory = error { return .changed(.gone) }
            throw error
        }
        let fd = path.name.withCString { openat(parent.rawValue, $0, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) }
        guard fd >= 0 else {
            switch errno {
            case ENOENT: return .changed(.gone)
            case ELOOP: return .changed(.replaced)
            default: throw .system(SystemError.current("open", path: path.description))
            }
        }
        let file = OwnedDescriptor(taking: fd)
        let (status, entry) = try ReceiveError.system { () throws(SystemError) in
            (try file.status(path.description), try parent.statusOfEntry(named: path.name, path.description))
        }
        if let change = checked.change(to: status) { return .changed(change) }
        // The name must still lead to the inode just checked, not to one renamed over it since.
        guard let entry, FileIdentity(entry).isSame(as: status) else { return .changed(.replaced) }
        return .unchanged(CheckedOpen(parent: parent, file: file, status: status))
    }

    /// What `remove(_:)` did.
    package enum Removal: Equatable {
        /// Removed. When the inode has other names (hard links), its status now: the unlink
        /// moved its change time, so a check of another name compares with this one.
        case removed(stillLinked: FileStatus?)
        case left(FileChange)
    }

    /// Deletes `checked` if it is still the file that was checked.
    package func remove(_ checked: CheckedFile) throws(ReceiveError) -> Removal {
        let opened: CheckedOpen
        switch try openChecked(checked) {
        case let .changed(change): return .left(change)
        case let .unchanged(found): opened = found
        }
        guard checked.path.name.withCString({ unlinkat(opened.parent.rawValue, $0, 0) }) == 0 else {
            if errno == ENOENT { return .left(.gone) }
            throw .system(SystemError.current("unlink", path: checked.path.description))
        }
        // Still open here: what its other names show now.
        guard opened.status.linkCount > 1, let after = try? opened.file.status(checked.path.description), after.linkCount > 0 else {
            return .removed(stillLinked: nil)
        }
        return .removed(stillLinked: after)
    }
}

extension StagedFile {
    /// Puts this staged file in the place of `checked`, if that is still the file that
    /// was checked, and keeps the file it replaces at `keep` (a folder of the library's
    /// `.lfsync` and a name in it): nothing is unlinked.
    ///
    /// The staged file is first moved to `keep`, then exchanged with `checked` in one
    /// `renameat2(RENAME_EXCHANGE)`: whatever stood at the name at that instant — the
    /// checked file, or one raced in since the check — ends up kept, never lost. Where the
    /// file system cannot exchange, the checked file is hard-linked to `keep` and the
    /// staged file renamed over it.
    /// - Returns: nil when replaced; how `checked` changed when it was left alone (the
    ///   staged file is then discarded).
    package func replace(_ checked: CheckedFile, keepingReplacedAt keep: (directory: OwnedDescriptor, name: String)) throws(ReceiveError) -> FileChange? {
        let library = staging.library
        let opened: LibraryDirectory.CheckedOpen
        switch try library.openChecked(checked) {
        case let .changed(change):
            try? discard()
            return change
        case let .unchanged(found): opened = found
        }
        let name = checked.path.name
        let display = checked.path.description
        let moved = try ReceiveError.system { () throws(SystemError) in
            try NoReplaceRename.rename(self.name, in: staging.directory, to: keep.name, in: keep.directory, what: display)
        }
        guard moved == .renamed else { throw .system(SystemError("rename", path: keep.name, errno: EEXIST)) }
        switch RenameExchange.exchange(keep.name, in: keep.directory, with: name, in: opened.parent) {
        case .exchanged:
            break
        case .unsupported:
            // Keep a second name of the checked file, then put the staged one over it.
            let aside = keep.name + ".new"
            guard renameat(keep.directory.rawValue, keep.name, keep.directory.rawValue, aside) == 0 else {
                throw .system(SystemError.current("rename", path: display))
            }
            guard linkat(opened.parent.rawValue, name, keep.directory.rawValue, keep.name, 0) == 0 else {
                throw .system(SystemError.current("link", path: display))
            }
            guard renameat(keep.directory.rawValue, aside, opened.parent.rawValue, name) == 0 else {
                throw .system(SystemError.current("rename", path: display))
            }
        case let .failed(error):
            throw .system(SystemError(error.operation, path: display, errno: error.errno))
        }
        try ReceiveError.system { () throws(SystemError) in
            try opened.parent.sync(display)
            try keep.directory.sync(display)
        }
        return nil
    }

    /// Puts this staged file at `path`, which must be free: a restore never replaces
    /// anything. The folders on the way are created with the library's modes.
    /// - Parameter syncing: fsync the folders that gained entries; a caller that places many
    ///   files syncs the file system once instead (`StagingArea.syncFileSystem`).
    /// - Returns: `.destinationExists` (and the staged file discarded) when something
    ///   has the name.
    package func place(at path: LibraryPath, syncing: Bool = true) throws(ReceiveError) -> NoReplaceRename.Outcome {
        let walk = try staging.library.openDirectory(path.parentComponents, create: true)
        let outcome = try ReceiveError.system { () throws(SystemError) in
            try NoReplaceRename.rename(name, in: staging.directory, to: path.name, in: walk.directory, what: path.description)
        }
        guard outcome == .renamed else {
            try? discard()
            return outcome
        }
        guard syncing else { return outcome }
        try ReceiveError.system { () throws(SystemError) in
            try walk.directory.sync(path.description)
            for created in walk.created { try created.parent.sync(path.description) }
        }
        return outcome
    }
}
