#if canImport(Glibc)
import Glibc
#endif
import LFSyncContent
import LFSyncSystem

/// The moves a sync makes (PROTOCOL.md, "Syncing"): a file leaving its path for the
/// versions area, and a conflict's losing file stepping aside to its conflict name. Each
/// acts on the checked file only (`openChecked`), by a rename that replaces nothing — what
/// stands at the name at the instant of the rename is moved, never unlinked, so even a file
/// raced in after the check is kept, not lost.
extension LibraryDirectory {
    /// Moves `checked` to `keep` (a folder of the library's `.lfsync` and a free name in it).
    /// - Returns: nil when moved; how `checked` changed when it was left alone.
    package func moveAside(_ checked: CheckedFile, to keep: (directory: OwnedDescriptor, name: String)) throws(ReceiveError) -> FileChange? {
        let opened: CheckedOpen
        switch try openChecked(checked) {
        case let .changed(change): return change
        case let .unchanged(found): opened = found
        }
        let display = checked.path.description
        let outcome = try ReceiveError.system { () throws(SystemError) in
            try NoReplaceRename.rename(checked.path.name, in: opened.parent, to: keep.name, in: keep.directory, what: display)
        }
        guard outcome == .renamed else { throw .system(SystemError("rename", path: keep.name, errno: EEXIST)) }
        try ReceiveError.system { () throws(SystemError) in
            try opened.parent.sync(display)
            try keep.directory.sync(display)
        }
        return nil
    }

    /// What `move(_:to:)` did.
    package enum Move: Equatable {
        case moved
        case left(FileChange)
        /// Something has the destination's name: nothing moved.
        case destinationExists
    }

    /// Renames `checked` to `destination` (a free name of the library; folders created).
    package func move(_ checked: CheckedFile, to destination: LibraryPath) throws(ReceiveError) -> Move {
        let opened: CheckedOpen
        switch try openChecked(checked) {
        case let .changed(change): return .left(change)
        case let .unchanged(found): opened = found
        }
        let walk = try openDirectory(destination.parentComponents, create: true)
        let outcome = try ReceiveError.system { () throws(SystemError) in
            try NoReplaceRename.rename(checked.path.name, in: opened.parent, to: destination.name, in: walk.directory, what: destination.description)
        }
        guard outcome == .renamed else { return .destinationExists }
        try ReceiveError.system { () throws(SystemError) in
            try opened.parent.sync(checked.path.description)
            try walk.directory.sync(destination.description)
            for created in walk.created { try created.parent.sync(destination.description) }
        }
        return .moved
    }
}
