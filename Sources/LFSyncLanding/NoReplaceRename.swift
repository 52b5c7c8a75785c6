#if canImport(Glibc)
import Glibc
#endif
import LFSyncSystem
import LFSyncStore

/// Moves a directory entry without ever replacing what is at the destination:
/// the installer's one way of putting a file into the library.
///
/// `renameat2(RENAME_NOREPLACE)` makes "check that the name is free" and
/// "take it" one atomic step (`RenameAt2`). Where it is missing, or the
/// file system rejects the flag, `linkat` + `unlinkat` gives the same
/// guarantee (a hard link never replaces an existing name). Only on a file
/// system without hard links either do we fall back to check-then-`renameat`,
/// whose window between check and rename is the one documented race.
package enum NoReplaceRename {
    package enum Outcome: Equatable {
        case renamed
        /// Something (anything: file, directory, symlink) already has the name; nothing moved.
        case destinationExists
    }

    /// Which mechanism to use; tests force each one, callers use `.best`.
    package enum Strategy: CaseIterable {
        case best, link, checkThenRename
    }

    /// Renames `sourceName` in `source` to `destinationName` in `destination`
    /// unless that name is taken. `what` names the destination in errors.
    package static func rename(
        _ sourceName: String, in source: OwnedDescriptor,
        to destinationName: String, in destination: OwnedDescriptor,
        what: @autoclosure () -> String, strategy: Strategy = .best
    ) throws(SystemError) -> Outcome {
        if strategy == .best, let renameat2 = RenameAt2.function {
            // `withCString`: a short name passed as a String argument would be copied to the heap.
            while sourceName.withCString({ from in
                destinationName.withCString { to in renameat2(source.rawValue, from, destination.rawValue, to, RenameAt2.noReplace) }
            }) != 0 {
                switch errno {
                case EINTR: continue
                case EEXIST: return .destinationExists
                // No such system call, or this file system does not support the flag.
                case ENOSYS, EINVAL, EOPNOTSUPP: return try rename(sourceName, in: source, to: destinationName, in: destination, what: what(), strategy: .link)
                default: throw SystemError.current("rename", path: what())
                }
            }
            return .renamed
        }
        if strategy != .checkThenRename {
            if linkat(source.rawValue, sourceName, destination.rawValue, destinationName, 0) == 0 {
                guard unlinkat(source.rawValue, sourceName, 0) == 0 else {
                    // Leave no second name behind: undo the link, report the failure.
                    let error = SystemError.current("unlink", path: what())
                    unlinkat(destination.rawValue, destinationName, 0)
                    throw error
                }
                return .renamed
            }
            switch errno {
            case EEXIST: return .destinationExists
            case EPERM, EOPNOTSUPP, ENOSYS, EMLINK: break  // no hard links here
            default: throw SystemError.current("link", path: what())
            }
        }
        // Last resort, racy: someone creating the name between check and rename loses their file.
        if try destination.statusOfEntry(named: destinationName, what()) != nil { return .destinationExists }
        guard renameat(source.rawValue, sourceName, destination.rawValue, destinationName) == 0 else {
            throw SystemError.current("rename", path: what())
        }
        return .renamed
    }
}
