import LFSyncContent
import LFSyncSystem
import LFSyncStore

/// A library file as it was when lfsync checked it — hashed it, or found it under a
/// status its cache vouches for — carried to the moment lfsync acts on it (deletes,
/// replaces or restores it), where it is compared with the file that is there then.
///
/// The one rule for acting on a file (ARCHITECTURE.md, "Acting on a file"): the act
/// happens only if the file still has the inode, size, modification time *and change
/// time* it had when it was checked (and the device, when the check was made in the same
/// run). The change time is the field that matters: a program can put a file's
/// modification time back (`touch -r`, `exiftool -P`, an editor that keeps times), but
/// not its change time, which the kernel moves on every write, chmod, link or rename. Bit
/// rot is the one change that moves nothing: the file system was never told.
package struct CheckedFile: Hashable, Sendable {
    package let path: LibraryPath
    /// The device, when the check was made in this run: device numbers are not stable
    /// across mounts (a loop device, a USB disk), so a check recorded earlier leaves it out.
    package let device: UInt64?
    package let inode: UInt64
    package let size: UInt64
    package let modificationTimeNs: Int64
    package let changeTimeNs: Int64

    /// The file as `status` shows it; `sameRun`: the status was read by this process.
    package init(path: LibraryPath, status: FileStatus, sameRun: Bool = true) {
        self.path = path
        device = sameRun ? status.device : nil
        inode = status.inode
        size = status.size
        modificationTimeNs = status.modificationTimeNs
        changeTimeNs = status.changeTimeNs
    }

    /// A check recorded earlier (a scan cache entry): no device.
    package init(path: LibraryPath, inode: UInt64, size: UInt64, modificationTimeNs: Int64, changeTimeNs: Int64) {
        self.path = path
        device = nil
        self.inode = inode
        self.size = size
        self.modificationTimeNs = modificationTimeNs
        self.changeTimeNs = changeTimeNs
    }

    /// The same file, after lfsync itself removed another name of its inode (a hard link):
    /// that moved the inode's change time to `status`'s, and nothing else did.
    package func afterUnlinkOfAnotherName(_ status: FileStatus) -> CheckedFile {
        guard status.inode == inode, device.map({ $0 == status.device }) ?? true,
              status.size == size, status.modificationTimeNs == modificationTimeNs else { return self }
        return CheckedFile(path: path, device: device, inode: inode, size: size, modificationTimeNs: modificationTimeNs,
                           changeTimeNs: status.changeTimeNs)
    }

    private init(path: LibraryPath, device: UInt64?, inode: UInt64, size: UInt64, modificationTimeNs: Int64, changeTimeNs: Int64) {
        self.path = path
        self.device = device
        self.inode = inode
        self.size = size
        self.modificationTimeNs = modificationTimeNs
        self.changeTimeNs = changeTimeNs
    }

    /// How the file at `status` (nil: nothing at the name) differs from the checked one;
    /// nil when it is the checked file, unchanged.
    package func change(to status: FileStatus?) -> FileChange? {
        guard let status else { return .gone }
        guard status.kind == .regular, status.inode == inode, device.map({ $0 == status.device }) ?? true else { return .replaced }
        if status.size != size { return .resized }
        if status.modificationTimeNs != modificationTimeNs { return .modified }
        if status.changeTimeNs != changeTimeNs { return .changedInPlace }
        return nil
    }
}

/// How a file differs from the one lfsync checked: any of these, and lfsync leaves it alone.
package enum FileChange: Hashable, Sendable, CustomStringConvertible {
    case gone
    /// Another file (or something that is not a regular file) has the name now.
    case replaced
    case resized
    /// Its modification time moved: written since.
    case modified
    /// Only its change time moved: written (or chmod-ed, linked) with its modification
    /// time put back, as `touch -r` or `exiftool -P` leave a file.
    case changedInPlace

    package var description: String {
        switch self {
        case .gone: "it is gone"
        case .replaced: "another file has its name now"
        case .resized: "its size changed"
        case .modified: "it was modified"
        case .changedInPlace: "it was changed in place (its modification time was kept, its change time moved)"
        }
    }
}
