import Foundation
import LFSyncContent
import LFSyncLanding
import LFSyncStore
import LFSyncSystem

/// `<library>/.lfsync/versions/<stamp>/<path>`: every file a sync replaced or deleted, kept
/// (never unlinked by the sync) and recorded in the ledger (`kept_version`), so that
/// `lfsync versions` can list and `lfsync restore` put back what another device's change
/// took from this library. Outside every scan and every sync, like the rest of `.lfsync`.
///
/// Kept for `retentionDays` (30 by default, as Syncthing's simple versioning keeps 5
/// versions forever and its staggered one thins them over a year: one fixed age is the rule
/// a person can predict); `prune` removes what is older, after every sync.
struct VersionsArea {
    static let area = "versions"
    static let defaultRetentionDays = 30

    let library: URL

    var root: URL {
        library.appendingPathComponent(LibraryLayout.stateDirectoryName, isDirectory: true).appendingPathComponent(Self.area, isDirectory: true)
    }

    /// One folder per sync run, sorting by time: `2026-12-05T10-20-34.123Z`.
    static func stamp(_ date: Date = Date()) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date).replacingOccurrences(of: ":", with: "-")
    }

    /// Where `path`'s file goes in this run, folders made (0700, through the library's
    /// descriptors), and its name under the area.
    func place(for path: LibraryPath, stamp: String, in directory: LibraryDirectory) throws -> (keep: (directory: OwnedDescriptor, name: String), stored: String) {
        let keep = try KeptCopies.place(for: path, area: Self.area, stamp: stamp, in: directory)
        return (keep, "\(stamp)/\(path.relativePath.string)")
    }

    /// The kept file a ledger row names, or nil when the name could lead outside the area:
    /// it is lfsync's own, but read back from the ledger on disk, and so checked like any
    /// name from outside (absolute, empty, `.` or `..` components).
    func url(ofStored stored: String) -> URL? {
        let components = stored.split(separator: "/", omittingEmptySubsequences: false)
        guard !stored.isEmpty, !components.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) else { return nil }
        return root.appendingPathComponent(stored)
    }

    /// Removes the kept versions older than `days`, file and row; returns how many went.
    @discardableResult
    func prune(olderThan days: Int, ledger: SyncStateStore, now: Date = Date()) async -> Int {
        let key = OffloadedFile.libraryKey(library)
        guard let kept = try? await ledger.read({ store throws(SQLiteError) in try store.keptVersions(library: key) }) else { return 0 }
        let cutoff = now.addingTimeInterval(-Double(days) * 86_400)
        let old = kept.filter { $0.keptAt < cutoff }
        guard !old.isEmpty else { return 0 }
        for version in old {
            guard let file = url(ofStored: version.stored) else { continue }
            try? FileManager.default.removeItem(at: file)
        }
        _ = try? await ledger.write { store throws(SQLiteError) in try store.forgetKeptVersions(library: key, stored: old.map(\.stored)) }
        removeEmptyFolders()
        return old.count
    }

    /// Bytes the area holds now (for `status`).
    func size() -> UInt64 {
        guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.fileSizeKey, .isRegularFileKey]) else { return 0 }
        var total: UInt64 = 0
        for case let url as URL in walker {
            guard let values = try? url.resourceValues(forKeys: [.fileSizeKey, .isRegularFileKey]), values.isRegularFile == true else { continue }
            total += UInt64(values.fileSize ?? 0)
        }
        return total
    }

    private func removeEmptyFolders() {
        guard let stamps = try? FileManager.default.contentsOfDirectory(at: root, includingPropertiesForKeys: nil) else { return }
        for stamp in stamps {
            guard let walker = FileManager.default.enumerator(at: stamp, includingPropertiesForKeys: [.isRegularFileKey]) else { continue }
            let holdsFiles = walker.contains { item in
                ((item as? URL).flatMap { try? $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile }) == true
            }
            if !holdsFiles { try? FileManager.default.removeItem(at: stamp) }
        }
    }
}
