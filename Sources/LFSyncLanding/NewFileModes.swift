#if canImport(Glibc)
import Glibc
#endif
import LFSyncSystem
import LFSyncStore

/// The permission bits of what the receiver creates in a library.
///
/// As rsync does without `--perms` (and `cp` does): a new file gets the
/// source's bits, changed first by the receiver's own `--chmod` rules, then
/// masked by the receiving process's umask — a 0644 photo lands 0644 under
/// umask 022 and 0640 under 027, so a media server or another user of the
/// household can read what a push brought. Setuid, setgid and sticky never
/// come from a peer. A new directory is made as `mkdir` makes one (0777 and
/// the umask, after the `D` rules, which may add setgid or sticky: `Dg+s`), so
/// a setgid parent still hands its group down. Staging and state stay private whatever these say.
public struct NewFileModes: Sendable, Equatable {
    public var umask: UInt32
    public var chmod: ChmodRules?

    package init(umask: UInt32 = ProcessUmask.current, chmod: ChmodRules? = nil) {
        self.umask = umask & 0o777
        self.chmod = chmod
    }

    /// The mode a new file gets, from the bits the sender reported.
    public func fileMode(sourcePermissions: UInt32) -> mode_t {
        let requested = chmod?.apply(to: sourcePermissions & 0o7777, isDirectory: false) ?? sourcePermissions
        return mode_t(requested & 0o777 & ~umask)
    }

    /// The mode a directory the receiver creates gets. The receiver's own `D` rules may add
    /// setgid (`Dg+s`: new folders keep the parent's group, as a shared household folder
    /// wants) and the sticky bit; never setuid, and nothing from a peer (a directory's mode
    /// never comes from the wire). `mkdirat` drops setgid, so `LibraryDirectory` sets these
    /// bits again on the new directory's descriptor.
    public var directoryMode: mode_t {
        let requested = chmod?.apply(to: 0o777, isDirectory: true) ?? 0o777
        return mode_t(requested & (0o777 | Self.directorySpecialBits) & ~umask)
    }

    /// Setgid and sticky: the special bits a directory may get from the receiver's own rules.
    package static let directorySpecialBits: UInt32 = 0o3000
}
