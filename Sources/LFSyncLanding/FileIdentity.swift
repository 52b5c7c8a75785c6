import LFSyncSystem
import LFSyncStore

/// Which file a name led to: device and inode. A partial is opened by name
/// for every operation (no descriptor is held between them), and comparing
/// this is how an `IncomingFile` tells that the name still leads to the
/// file it created or adopted, not to one that replaced it.
struct FileIdentity: Hashable, Sendable {
    package let device: UInt64
    package let inode: UInt64

    package init(_ status: FileStatus) {
        device = status.device
        inode = status.inode
    }

    /// Whether `status` (nil: nothing there) is this very file.
    package func isSame(as status: FileStatus?) -> Bool {
        guard let status else { return false }
        return status.device == device && status.inode == inode
    }
}
