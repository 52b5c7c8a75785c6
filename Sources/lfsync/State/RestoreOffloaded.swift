import Foundation
import LocalFirstSync
import LFSyncContent
import LFSyncStore
import LFSyncLanding
import LFSyncSystem

/// The offloaded rows of a library around a pull: which files are still missing, how each
/// comes back, and which records go.
///
/// A row written with the file's manifest is brought back *by its record*: the file is
/// rebuilt at its own path from its chunk list — chunks still in the library copied
/// locally, the rest asked of the device pulled from (ChunkRequest), each checked against
/// its hash — whatever path (a conflict name, another folder) that device keeps the content
/// at, and placed only where nothing has the name now. A row from an lfsync before
/// manifests were recorded is fetched by content ID (Fetch), as it was then.
///
/// A record goes only when its path holds its file again: the same file hash, not merely
/// a file of the same size.
enum RestoreOffloaded {
    /// A file put back, or why not.
    struct Outcome {
        var restored: [RelativePath] = []
        var failed: [(path: RelativePath, reason: String)] = []
    }

    /// The library's offloaded files that are not back, judged on `files` (a scan's
    /// manifests by path); the rows of those that are back (brought back some other way)
    /// are forgotten first.
    static func stillMissing(in library: URL, files: [RelativePath: FileManifest], assets: [Asset], ledger: SyncStateStore) async throws -> [OffloadedFile] {
        let root = OffloadedFile.libraryKey(library)
        let rows = try await ledger.read { store throws(SQLiteError) in try store.offloaded(inLibrary: root) }
        guard !rows.isEmpty else { return [] }
        try await forgetReturned(rows, in: library, files: files, assets: assets, ledger: ledger)
        return rows.filter { !isBack($0, files: files, assets: assets) }
    }

    /// Forgets the rows whose path holds their file again; returns how many.
    @discardableResult
    static func forgetReturned(_ rows: [OffloadedFile], in library: URL, files: [RelativePath: FileManifest], assets: [Asset],
                               ledger: SyncStateStore) async throws -> Int {
        let back = rows.filter { isBack($0, files: files, assets: assets) }.map(\.path)
        guard !back.isEmpty else { return 0 }
        let root = OffloadedFile.libraryKey(library)
        try await ledger.write { store throws(SQLiteError) in try store.forgetOffloaded(inLibrary: root, paths: back) }
        return back.count
    }

    /// Whether the row's path holds its file again: by file hash; a row without a manifest,
    /// by the content ID of the asset the path belongs to.
    static func isBack(_ row: OffloadedFile, files: [RelativePath: FileManifest], assets: [Asset]) -> Bool {
        if let manifest = row.manifest { return files[row.path]?.fileHash == manifest.fileHash }
        return assets.contains { asset in asset.contentID == row.content && asset.files.contains { $0.manifest.path == row.path } }
    }

    /// Rebuilds each of `rows` (those with a manifest) at its path from `peer`'s chunks
    /// and the library's own, never over anything that has the name now.
    static func restore(_ rows: [OffloadedFile], into library: URL, index: LibraryIndex, sync: LocalSync, peer: Peer) async -> Outcome {
        var outcome = Outcome()
        let directory: LibraryDirectory, staging: StagingArea
        do {
            directory = try LibraryDirectory(path: library.path)
            staging = try StagingArea(library: directory)
        } catch {
            outcome.failed = rows.map { ($0.path, "\(error)") }
            return outcome
        }
        let modes = NewFileModes()
        let rebuilder = FileRebuilder(staging: staging, sync: sync, peer: peer)
        // Staged in groups: their data made durable with one file-system sync before any is
        // renamed into place, and the renames with one more (an fsync per file cost a flush each).
        var group: [(row: OffloadedFile, path: LibraryPath, staged: StagedFile)] = [], groupBytes: UInt64 = 0
        func land() {
            defer { group = []; groupBytes = 0 }
            do { try staging.syncFileSystem() } catch {
                for item in group { try? item.staged.discard(); outcome.failed.append((item.row.path, "\(error)")) }
                return
            }
            for item in group {
                do {
                    switch try item.staged.place(at: item.path, syncing: false) {
                    case .renamed: outcome.restored.append(item.row.path)
                    case .destinationExists: outcome.failed.append((item.row.path, "something else took that name meanwhile; it was left alone"))
                    }
                } catch {
                    try? item.staged.discard()
                    outcome.failed.append((item.row.path, "\(error)"))
                }
            }
            if (try? staging.syncFileSystem()) == nil {
                outcome.failed += group.map { ($0.row.path, "could not make its return durable") }
            }
        }
        // What can come back: a row with its manifest, whose name nothing has taken since.
        var wanted: [(row: OffloadedFile, path: LibraryPath, manifest: FileManifest)] = []
        for row in rows {
            guard let manifest = row.manifest else { continue }
            do {
                let path = try LibraryPath.validate(row.path)
                // Something has the name (the user put a file there since): it is not replaced.
                if try Self.nameIsTaken(path, in: directory) {
                    outcome.failed.append((row.path, "something else has that name now; it was left alone (move it, then pull again)"))
                    continue
                }
                wanted.append((row, path, manifest))
            } catch {
                outcome.failed.append((row.path, "\(error)"))
            }
        }
        do {
            try await rebuilder.rebuild(wanted.map(\.manifest), local: { _, _, chunk in localChunk(chunk, in: directory, index: index) }) { position, result in
                let (row, path, manifest) = wanted[position]
                do {
                    let rebuilt = try result.get()
                    try rebuilt.staged.prepareForInstall(modificationTimeNs: manifest.modificationTimeNs,
                                                         mode: modes.fileMode(sourcePermissions: manifest.permissions), syncing: false)
                    group.append((row, path, rebuilt.staged))
                    groupBytes += manifest.size
                    if group.count >= Self.groupFiles || groupBytes >= Self.groupBytes { land() }
                } catch let failure as FileRebuilder.Failure {
                    outcome.failed.append((row.path, "\(peer.name) \(failure.description)"))
                } catch {
                    outcome.failed.append((row.path, "\(error)"))
                }
            }
        } catch {
            // The connection ended (or the pull was cancelled): what was not staged stays offloaded.
            let staged = Set(group.map(\.row.path)).union(outcome.restored).union(outcome.failed.map(\.path))
            outcome.failed += wanted.filter { !staged.contains($0.row.path) }.map { ($0.row.path, "\(error)") }
        }
        if !group.isEmpty { land() }
        return outcome
    }

    /// Files, and bytes, staged before a group is made durable and placed.
    static let groupFiles = 256
    static let groupBytes: UInt64 = 64 << 20

    /// Whether anything has `path`'s name (its folders opened without following symlinks).
    private static func nameIsTaken(_ path: LibraryPath, in directory: LibraryDirectory) throws -> Bool {
        let parent: OwnedDescriptor
        do { parent = try directory.openDirectory(path.parentComponents, create: false).directory } catch {
            if case let .system(failure) = error, failure.errno == ENOENT { return false }
            throw error
        }
        return try parent.statusOfEntry(named: path.name, path.description) != nil
    }

    /// A chunk's bytes from another file of the library, as its chunk index places them
    /// (checked against the hash by the caller).
    static func localChunk(_ chunk: ChunkRef, in directory: LibraryDirectory, index: LibraryIndex) -> [UInt8]? {
        guard let places = try? index.chunkIndex.locations(of: chunk.hash, limit: 4) else { return nil }
        for place in places where place.length == chunk.length {
            guard let path = try? LibraryPath.validate(place.path), let file = try? directory.openFileForReading(path),
                  let bytes = try? file.read(count: Int(chunk.length), at: place.offset, path.description),
                  bytes.count == Int(chunk.length), ContentHash.chunk(bytes) == chunk.hash else { continue }
            return bytes
        }
        return nil
    }
}
