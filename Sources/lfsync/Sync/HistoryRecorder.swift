#if canImport(Glibc)
import Glibc
#endif
import Foundation
import LFSyncContent
import LFSyncCrypto
import LFSyncStore
import LFSyncSystem

/// Brings a library's path history (PROTOCOL.md, "Path versions") up to what a scan found:
/// a file new or changed since its row was written gets this device's next version, a file
/// gone gets a deletion — except what is absent on purpose, which is never a deletion: a
/// file offloaded, excluded, skipped as unreadable, outside the folder that was scanned, or
/// still being written (not settled when the scan looked).
///
/// **An emptied or unmounted library propagates no deletion** (Syncthing's folder marker):
/// the library keeps `.lfsync/library-id` with its history's ID. When the history says
/// files should be there and the marker is missing or names another history — a disk not
/// mounted, leaving its empty mount point — or the scan found no file at all, the missing
/// files are not recorded as deleted, and `looksUnmounted` says so.
struct HistoryRecorder {
    let library: URL
    let ledger: SyncStateStore
    /// This device's short ID (`DeviceShortID`).
    let device: UInt64
    /// Paths a push a sync follows is placing here (`PlacementsAwaitingSync`): while one has
    /// no row, it is left to that sync, which takes or adopts the sender's version — recorded
    /// as this device's own, it would meet a newer version of the sender's as a conflict.
    var awaitingSync: Set<RelativePath> = []

    var key: String { OffloadedFile.libraryKey(library) }

    struct Outcome {
        /// Every row of the history after the write.
        var history: [RelativePath: PathHistoryRow]
        var position: HistoryPosition
        /// Paths given a new version by this scan.
        var changed: Int
        /// Missing files not recorded as deleted because the library looks unmounted or emptied.
        var looksUnmounted: Bool
        /// Changes left for a later record (still being written, or changed again since the
        /// scan looked): whoever records must come back for them, or they are never recorded.
        var leftForLater = 0
    }

    /// The marker's library-relative path.
    static let markerName = "library-id"

    /// - Parameters:
    ///   - within: only paths at or below this folder were scanned (a folder push).
    ///   - adopting: versions another device has for paths this history does not know,
    ///     whose file here already has exactly that content: recorded as they are (the two
    ///     devices have the same file), not as a new version of this device's.
    /// - Parameter settledOnly: leave out files changed within the scanner's settling time
    ///   (still being written, perhaps): what a watcher does. An explicit push records them.
    /// - Parameter stillChanging: a file it says yes to is left for a later record (`watch`:
    ///   changed within its `--settle` time); asked only of files that changed.
    func record(_ scan: LibraryScan, within: RelativePath? = nil, adopting: [RelativePath: PathVersion] = [:],
                settledOnly: Bool = true, stillChanging: @Sendable (RelativePath) -> Bool = { _ in false },
                now: Date = Date()) async throws -> Outcome {
        let key = key
        let (stored, offloaded) = try await ledger.read { store throws(SQLiteError) in
            (try store.pathHistory(library: key), Set(try store.offloaded(inLibrary: key).map(\.path)))
        }
        var history = stored
        var scanned: [RelativePath: Hash256] = [:]
        var manifests: [RelativePath: FileManifest] = [:]
        var unsettled = Set<RelativePath>()
        for asset in scan.assets {
            for file in asset.files {
                let path = file.manifest.path
                manifests[path] = file.manifest
                if settledOnly, scan.settledStatus[path] == nil { unsettled.insert(path) } else { scanned[path] = file.manifest.fileHash }
            }
        }
        var adopted: [RelativePath: PathHistoryRow] = [:]
        for (path, version) in adopting where history[path] == nil && version.fileHash != nil && scanned[path] == version.fileHash {
            adopted[path] = PathHistoryRow(version: version)
            history[path] = adopted[path]
        }
        let skipped = Set(scan.skipped.map(\.path))
        let excluded = scan.excluded
        let position = try await ledger.read { store throws(SQLiteError) in try store.historyPosition(library: key) }
        // What this history said before this record (not what it adopts now: an adopted file
        // is on the disk by definition, and a library whose history was empty until now has
        // had no marker to lose).
        let expectsFiles = stored.values.contains { $0.expectedOnDisk != nil }
        let marker = Self.readMarker(in: library)
        let looksUnmounted = expectsFiles && (scanned.isEmpty && unsettled.isEmpty || position.map { marker != $0.historyID } ?? false)
        let awaitingSync = awaitingSync
        func leftOut(_ path: RelativePath) -> Bool {
            if history[path] == nil, awaitingSync.contains(path) { return true }
            if looksUnmounted || offloaded.contains(path) || skipped.contains(path) || unsettled.contains(path) { return true }
            if let within, !Self.isInside(path, within) { return true }
            return excluded.contains { path == $0 || Self.isInside(path, $0) }
        }
        var changes = LocalChanges.changes(
            history: history, scanned: scanned, device: device, now: Int64((now.timeIntervalSince1970 * 1000).rounded()), leftOut: leftOut)
        // A file's version is dated by its modification time (when the person saved it), so
        // that of two concurrent edits the later one keeps the path whenever either was noticed.
        for (path, row) in changes where !row.version.isDeleted {
            if let manifest = manifests[path] { changes[path]?.version.changedAt = manifest.modificationTimeNs / 1_000_000 }
            _ = row
        }
        // What the scan saw must still be so: a file another process (a serve applying a
        // sync, an editor) changed since the scan looked is left for the next record.
        let found = changes.count
        changes = changes.filter { path, row in
            if row.version.isDeleted { return Self.status(of: path, in: library) == nil }
            if stillChanging(path) { return false }
            guard let now = Self.status(of: path, in: library) else { return false }
            guard let seen = scan.settledStatus[path] else {
                // Hashed while it was still changing: at least the size and time it was hashed at.
                return manifests[path].map { now.size == $0.size && now.modificationTimeNs == $0.modificationTimeNs } ?? false
            }
            return now.inode == seen.inode && now.size == seen.size && now.modificationTimeNs == seen.modificationTimeNs
                && now.changeTimeNs == seen.changeTimeNs
        }
        let leftForLater = found - changes.count + unsettled.filter { manifests[$0]?.fileHash != history[$0]?.version.fileHash }.count
        changes.merge(adopted) { _, new in new }
        let rows = changes
        let written = try await ledger.write { store throws(SQLiteError) in try store.recordPathHistory(library: key, rows) }
        history.merge(changes) { _, new in new }
        if marker != written.historyID, !looksUnmounted { Self.writeMarker(written.historyID, in: library) }
        return Outcome(history: history, position: written, changed: changes.count - adopted.count, looksUnmounted: looksUnmounted,
                       leftForLater: leftForLater)
    }

    /// Whether `path` is `folder` or below it.
    static func isInside(_ path: RelativePath, _ folder: RelativePath) -> Bool {
        folder.string.isEmpty || path == folder || path.string.utf8.starts(with: (folder.string + "/").utf8)
    }

    /// The file's status now (not following a final symlink); nil when nothing has the name.
    static func status(of path: RelativePath, in library: URL) -> FileStatus? {
        var raw = stat()
        let full = library.path + "/" + path.string
        guard lstat(full, &raw) == 0 else { return errno == ENOENT || errno == ENOTDIR ? nil : FileStatus(raw) }
        return FileStatus(raw)
    }

    private static func markerURL(in library: URL) -> URL {
        library.appendingPathComponent(LibraryLayout.stateDirectoryName, isDirectory: true).appendingPathComponent(markerName)
    }

    static func readMarker(in library: URL) -> UInt64? {
        guard let data = try? Data(contentsOf: markerURL(in: library)), data.count <= 64,
              let text = String(data: data, encoding: .utf8) else { return nil }
        return UInt64(text.trimmingCharacters(in: .whitespacesAndNewlines), radix: 16)
    }

    private static func writeMarker(_ historyID: UInt64, in library: URL) {
        let folder = library.appendingPathComponent(LibraryLayout.stateDirectoryName, isDirectory: true)
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        try? Data((String(historyID, radix: 16) + "\n").utf8).write(to: markerURL(in: library), options: .atomic)
    }
}
