#if canImport(Glibc)
import Glibc
#endif

/// The fields of `stat` that decide whether a file is "unchanged": size,
/// nanosecond mtime and inode (the validity stamp of the chunk index), and
/// the ctime, which no program can set back: an edit that restores the mtime
/// (`touch -r`, `exiftool -P`) still moves it. The scan cache wants all four.
package struct FileStatus: Hashable, Sendable {
    public enum Kind: Sendable { case regular, directory, symlink, other }

    public var kind: Kind
    public var size: UInt64
    public var modificationTimeNs: Int64
    public var inode: UInt64
    public var device: UInt64
    /// Last change of the content *or* the metadata (chmod, rename, link count).
    public var changeTimeNs: Int64
    /// The permission bits (`st_mode & 0o7777`, sticky bit included).
    public var permissions: UInt32
    /// The owner's user ID: lfsync writes incoming files only where this user alone can.
    public var owner: UInt32
    /// Names the inode has (hard links).
    public var linkCount: UInt64

    package init(_ raw: stat) {
        switch raw.st_mode & S_IFMT {
        case S_IFREG: kind = .regular
        case S_IFDIR: kind = .directory
        case S_IFLNK: kind = .symlink
        default: kind = .other
        }
        size = UInt64(max(0, raw.st_size))
        modificationTimeNs = FileTime.nanoseconds(raw.st_mtim)
        inode = UInt64(raw.st_ino)
        device = UInt64(raw.st_dev)
        changeTimeNs = FileTime.nanoseconds(raw.st_ctim)
        permissions = UInt32(raw.st_mode & 0o7777)
        owner = UInt32(raw.st_uid)
        linkCount = UInt64(raw.st_nlink)
    }

    /// `lstat`: never follows a final symlink.
    public static func of(path: String) throws(SystemError) -> FileStatus {
        var raw = stat()
        guard lstat(path, &raw) == 0 else { throw SystemError.current("lstat", path: path) }
        return FileStatus(raw)
    }

    /// Same as the stamp the scanner stored: size, mtime and inode.
    public func hasSameStamp(as other: FileStatus) -> Bool {
        size == other.size && modificationTimeNs == other.modificationTimeNs && inode == other.inode
    }
}
