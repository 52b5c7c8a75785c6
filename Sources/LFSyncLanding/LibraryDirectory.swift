#if canImport(Glibc)
import Glibc
#endif
import LFSyncContent
import LFSyncSystem
import LFSyncStore

/// The library root, held open for as long as we receive into it; every write
/// of the receiving side goes through this descriptor.
///
/// Paths are never handed to the kernel whole. Each directory component is
/// opened relative to its parent with `O_NOFOLLOW | O_DIRECTORY`, so a symlink
/// anywhere below the root — planted by someone with write access to the
/// library, or swapped in while we work — makes the walk fail with
/// `.symlinkInPath` instead of redirecting the write outside the library
/// (the rsync CVE-2024-12087/12088 class of bug). The root itself is opened
/// following symlinks: the user chose it.
package final class LibraryDirectory: Sendable {
    /// As the caller gave it; for messages only, never reopened.
    package let rootPath: String
    package let root: OwnedDescriptor
    /// The modes of the files and directories this library receives.
    package let modes: NewFileModes

    package init(path: String, modes: NewFileModes = NewFileModes()) throws(ReceiveError) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .system(SystemError.current("open", path: path)) }
        rootPath = path
        root = OwnedDescriptor(taking: fd)
        self.modes = modes
    }

    /// Room on the library's file system.
    package struct Space: Equatable, Sendable {
        /// Bytes an unprivileged writer can still use (`f_bavail * f_frsize`).
        package var available: UInt64
        /// The file system's size (`f_blocks * f_frsize`).
        package var total: UInt64
    }

    /// Measures the room on the library's file system (`fstatvfs` of the root).
    package func space() throws(ReceiveError) -> Space {
        var info = statvfs()
        guard fstatvfs(root.rawValue, &info) == 0 else { throw .system(SystemError.current("fstatvfs", path: rootPath)) }
        func bytes(_ blocks: UInt64) -> UInt64 {
            let (product, overflow) = blocks.multipliedReportingOverflow(by: UInt64(info.f_frsize))
            return overflow ? .max : product
        }
        return Space(available: bytes(UInt64(info.f_bavail)), total: bytes(UInt64(info.f_blocks)))
    }

    /// A directory reached by `openDirectory`, and what the walk had to create.
    package struct Walk {
        package let directory: OwnedDescriptor
        /// Directories created on the way, outermost first, each with the
        /// directory it was created in (to undo, and to fsync the new entry).
        let created: [(parent: OwnedDescriptor, name: String)]
    }

    /// Opens `components` below the root one at a time, each with `O_NOFOLLOW`,
    /// creating missing ones (`modes.directoryMode`) when `create` is set.
    /// Only the current directory's descriptor is kept open, so depth does not
    /// cost descriptors.
    package func openDirectory(_ components: ArraySlice<String>, create: Bool) throws(ReceiveError) -> Walk {
        var current = root
        var created: [(parent: OwnedDescriptor, name: String)] = []
        for (depth, component) in components.enumerated() {
            // Only an error message needs the escaped path; a walk per received file should not.
            let display = { PrintablePath.escape(components.prefix(depth + 1).joined(separator: "/")) }
            let (next, didCreate) = try openChildDirectory(
                of: current, named: component, create: create ? modes.directoryMode : nil, displayPath: display())
            if didCreate { created.append((current, component)) }
            if depth == 0 { try refuseStateDirectory(next, displayPath: display()) }
            current = next
        }
        return Walk(directory: current, created: created)
    }

    /// Opens a regular file for reading without following a symlink at any
    /// component; `O_NONBLOCK` so a FIFO planted under the name cannot hang us.
    package func openFileForReading(_ path: LibraryPath) throws(ReceiveError) -> OwnedDescriptor {
        let parent = try openDirectory(path.parentComponents, create: false).directory
        let fd = path.name.withCString { openat(parent.rawValue, $0, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) }
        guard fd >= 0 else {
            if errno == ELOOP { throw .symlinkInPath(path.description) }
            throw .system(SystemError.current("open", path: path.description))
        }
        let file = OwnedDescriptor(taking: fd)
        let kind = try ReceiveError.system { () throws(SystemError) in try file.status(path.description).kind }
        guard kind == .regular else { throw .system(SystemError("open", path: path.description, errno: EINVAL)) }
        return file
    }

    /// Removes the file at `path` if it is still a regular file of `size` bytes last modified
    /// at `modificationTimeNs`: what `lfsync offload` removes, never a file put in its place
    /// since. The directories on the way are opened without following symlinks.
    /// - Returns: false (nothing removed) when the file is gone or is not that file any more.
    package func removeFile(_ path: LibraryPath, size: UInt64, modificationTimeNs: Int64) throws(ReceiveError) -> Bool {
        let parent = try openDirectory(path.parentComponents, create: false).directory
        let status = try ReceiveError.system { () throws(SystemError) in try parent.statusOfEntry(named: path.name, path.description) }
        guard let status, status.kind == .regular, status.size == size, status.modificationTimeNs == modificationTimeNs else { return false }
        guard path.name.withCString({ unlinkat(parent.rawValue, $0, 0) }) == 0 else {
            if errno == ENOENT { return false }
            throw .system(SystemError.current("unlink", path: path.description))
        }
        return true
    }

    /// One `O_NOFOLLOW | O_DIRECTORY` step. With `create` (a mode), a missing
    /// directory is made with `mkdirat` and then opened the same way, so a
    /// symlink raced in between is still refused.
    /// - Returns: the directory and whether this call created it.
    package func openChildDirectory(
        of parent: OwnedDescriptor, named name: String, create mode: mode_t?, displayPath: @autoclosure () -> String
    ) throws(ReceiveError) -> (OwnedDescriptor, created: Bool) {
        var created = false
        // Two rounds: a missing directory is created once, then opened.
        for _ in 0..<2 {
            let fd = openat(parent.rawValue, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            if fd >= 0 {
                let directory = OwnedDescriptor(taking: fd)
                // mkdir leaves out setgid (and a umask can drop more): the bits the rules asked
                // for are set on the directory just made, through its own descriptor.
                if created, let mode, UInt32(mode) & NewFileModes.directorySpecialBits != 0, fchmod(fd, mode) != 0 {
                    throw .system(SystemError.current("chmod", path: displayPath()))
                }
                return (directory, created)
            }
            let openErrno = errno
            switch openErrno {
            case ENOENT:
                guard let mode else { throw .system(SystemError("open", path: displayPath(), errno: openErrno)) }
                if mkdirat(parent.rawValue, name, mode) == 0 {
                    created = true
                } else if errno != EEXIST {
                    throw .system(SystemError.current("mkdir", path: displayPath()))
                }
            case ELOOP, ENOTDIR:
                // Tell a symlink (refused on principle) from a plain file in the way.
                var raw = stat()
                if fstatat(parent.rawValue, name, &raw, AT_SYMLINK_NOFOLLOW) == 0, FileStatus(raw).kind == .symlink {
                    throw .symlinkInPath(displayPath())
                }
                throw .notADirectory(displayPath())
            default:
                throw .system(SystemError("open", path: displayPath(), errno: openErrno))
            }
        }
        throw .system(SystemError("open", path: displayPath(), errno: ENOENT))
    }

    /// Defence in depth for `LibraryPath`'s name check: a first component that
    /// a case-folding file system resolves to `.lfsync` is the same inode.
    private func refuseStateDirectory(_ directory: OwnedDescriptor, displayPath: @autoclosure () -> String) throws(ReceiveError) {
        let identities = try ReceiveError.system { () throws(SystemError) in
            (try root.statusOfEntry(named: LibraryLayout.stateDirectoryName, displayPath()), try directory.status(displayPath()))
        }
        if FileIdentity(identities.1).isSame(as: identities.0) { throw .reservedPath(displayPath()) }
    }
}
