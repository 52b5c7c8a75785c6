import Foundation
import LocalFirstSync
import LFSyncSystem
import LFSyncCrypto
import LFSyncContent
import LFSyncStore
import LFSyncTransport
import LFSyncTCP
import LFSyncDiscovery

/// Notices when `lfsync trust`, `untrust` or `peers` rewrote the config file,
/// so a long-running `serve` or `watch` applies the change without a restart.
///
/// The file is replaced by a rename, so it is watched by its identity (inode,
/// size, modification and change time): one `stat` a second, nothing held
/// open. A file that does not parse is reported once and the previous
/// configuration stays in force.
struct ConfigWatcher: Sendable {
    let url: URL
    /// A config that lists this device's own ID is refused like one that does not parse.
    let ownID: DeviceID
    var interval: Duration = .seconds(1)

    /// Calls `changed` with every new configuration until the task is cancelled.
    func start(
        log: @escaping @Sendable (String) -> Void = { _ in },
        _ changed: @escaping @Sendable (DeviceConfig) async -> Void
    ) -> Task<Void, Never> {
        let url = url, interval = interval, ownID = ownID
        return Task {
            var last = Self.stamp(url)
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                let now = Self.stamp(url)
                guard now != last else { continue }
                last = now
                do {
                    await changed(try DeviceConfig.load(from: url, ownID: ownID))
                } catch {
                    log("the config file changed but cannot be read (\(error)); keeping the previous settings")
                }
            }
        }
    }

    private struct Stamp: Equatable {
        var inode: UInt64
        var size: Int64
        var modifiedNs: Int64
        var changedNs: Int64
    }

    private static func stamp(_ url: URL) -> Stamp? {
        var raw = stat()
        guard stat(url.path, &raw) == 0 else { return nil }
        return Stamp(inode: UInt64(raw.st_ino), size: Int64(raw.st_size),
                     modifiedNs: Int64(raw.st_mtim.tv_sec) * 1_000_000_000 + Int64(raw.st_mtim.tv_nsec),
                     changedNs: Int64(raw.st_ctim.tv_sec) * 1_000_000_000 + Int64(raw.st_ctim.tv_nsec))
    }
}
