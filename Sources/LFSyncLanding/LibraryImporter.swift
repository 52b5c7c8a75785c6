import Foundation
import LFSyncContent
import LFSyncCrypto
import LFSyncSystem
import LFSyncStore

/// Places received assets into a library folder — the Linux counterpart of
/// "save to photo library". Files land at their library-relative paths, an
/// asset's files (Live Photo pairs, sidecars) together, every placement of
/// its content at once, never overwriting anything (ARCHITECTURE.md, "Receiver safety").
///
/// Before asking a peer for a chunk it looks for it locally: in staging
/// (an interrupted earlier transfer) and, through the chunk index, anywhere
/// in the library (a renamed or copied file). Every local chunk is re-hashed
/// before use.
///
/// Partials no transfer holds any more are cleaned up when the importer opens
/// and at every plan (see `StagingPolicy`).
package final class LibraryImporter: Sendable {
    package let directory: LibraryDirectory
    package let staging: StagingArea
    private let installer: LibraryInstaller
    private let chunkIndex: ChunkIndex?
    private let scanCache: ScanCache?
    /// Nanoseconds since 1970: the staging clean-up's idea of "now".
    private let now: @Sendable () -> Int64

    /// - Parameter scanCache: the library's scan cache; received files are entered in it,
    ///   so the next scan of the library (a restarted `serve`) does not hash them again.
    /// - Parameter modes: the permission bits of the files and directories it creates.
    package convenience init(
        library: URL, chunkIndex: ChunkIndex? = nil, scanCache: ScanCache? = nil, modes: NewFileModes = NewFileModes()
    ) throws(ReceiveError) {
        try self.init(library: library, chunkIndex: chunkIndex, scanCache: scanCache, modes: modes, now: LibraryScanner.wallClockNs)
    }

    /// - Parameter now: the clock the staging clean-up ages partials by (tests move it).
    package init(
        library: URL, chunkIndex: ChunkIndex?, scanCache: ScanCache?, modes: NewFileModes = NewFileModes(),
        now: @escaping @Sendable () -> Int64
    ) throws(ReceiveError) {
        directory = try LibraryDirectory(path: library.path, modes: modes)
        staging = try StagingArea(library: directory)
        installer = LibraryInstaller(staging: staging)
        self.chunkIndex = chunkIndex
        self.scanCache = scanCache
        self.now = now
        // Files finished but not installed when we last stopped go back to being partials;
        // then what nobody has touched for too long goes.
        _ = try staging.recoverInterruptedFiles()
        try staging.removeUnusedPartials(now: now())
    }

    package var rootPath: String { directory.rootPath }

    /// What an accepted offer needs: which placement files are already in
    /// place, and for each content not `known` (already on its way in), its
    /// `IncomingFile` and the chunks that must come from the peer.
    package struct PreparedOffer {
        package var plan = ImportPlan()
        package var files: [Hash256: IncomingFile] = [:]
    }

    /// Plans an offer in three steps, so that a plan that cannot go ahead
    /// leaves nothing behind:
    /// 1. look: which placement files are in place, which chunks partials left
    ///    by earlier transfers already hold (nothing is created);
    /// 2. the space check, over every copy the offer would add, leaving the
    ///    policy's reserve free and not counting on room promised to offers
    ///    accepted before — after the staging clean-up, which never touches
    ///    the partials this plan has just adopted (its `IncomingFile`s hold
    ///    them). When the whole offer does not fit, its assets are taken in
    ///    offer order while they fit and the others are `refused`, as a full
    ///    disk under rsync still receives the files that fit (`ImportPlan.refused`);
    /// 3. copy the chunks found elsewhere in the library into new partials —
    ///    removed again if this step fails.
    /// - Parameter tracked: for a push a sync follows (PROTOCOL.md, "Syncing"), the offered
    ///   paths this library's history knows: those, and paths where anything stands, are
    ///   left to the sync (counted as in place: nothing is sent or placed for them), which
    ///   tells an edit from a conflict and a deleted file from a new one. Nil for a plain push.
    /// - Throws: `.insufficientSpace` when not even the first asset that needs room fits.
    package func prepare(_ assets: [PlacedAsset], known: Set<Hash256>, leavingToSync tracked: Set<RelativePath>? = nil) throws(ReceiveError) -> PreparedOffer {
        try prepare(assets, known: known, leavingToSync: tracked, measuring: directory.space)
    }

    /// `prepare` with the file system's room measured by `measure` (tests: a disk of any size).
    package func prepare(
        _ assets: [PlacedAsset], known: Set<Hash256>, leavingToSync tracked: Set<RelativePath>?,
        measuring measure: () throws(ReceiveError) -> LibraryDirectory.Space
    ) throws(ReceiveError) -> PreparedOffer {
        var prepared = PreparedOffer()
        var newContents: [(hash: Hash256, manifest: FileManifest)] = []
        var seen = Set<Hash256>()
        var inPlace = inPlace(assets, leavingToSync: tracked).makeIterator()
        for asset in assets {
            var rows: [[Bool]] = []
            for placement in asset.placements {
                var row: [Bool] = []
                for file in placement.files {
                    let here = inPlace.next() ?? false
                    row.append(here)
                    guard !here else { continue }
                    let hash = file.manifest.fileHash
                    if !known.contains(hash), seen.insert(hash).inserted { newContents.append((hash, file.manifest)) }
                }
                rows.append(row)
            }
            prepared.plan.inPlace[asset.contentID] = rows
        }
        for (hash, manifest) in newContents {
            prepared.files[hash] = try IncomingFile.prepare(in: staging, manifest: manifest)
        }
        var bytesToAdd: UInt64 = 0
        var counted = Set<Hash256>()
        for asset in assets {
            let (cost, brought) = Self.cost(of: asset, inPlace: prepared.plan.inPlace[asset.contentID], files: prepared.files, counted: counted)
            bytesToAdd += cost
            counted.formUnion(brought)
        }
        let room = try staging.room(toFit: bytesToAdd, now: now(), measuring: measure)
        if bytesToAdd > 0, bytesToAdd > room.usable {
            try leaveOut(assets, thatDoNotFit: room, from: &prepared)
            newContents.removeAll { prepared.files[$0.hash] == nil }
        }
        for file in prepared.files.values { file.promiseMissingBytes() }
        // Where the library already has the chunks still missing: one read of the index for the offer.
        let lacking = newContents.flatMap { hash, manifest in
            manifest.chunks.indices.filter { prepared.files[hash]?.presentChunks.contains($0) == false }.map { manifest.chunks[$0].hash }
        }
        let places = chunkIndex.flatMap { try? $0.locations(ofAll: lacking) } ?? [:]
        do {
            for (hash, manifest) in newContents {
                guard let file = prepared.files[hash] else { continue }
                var missing = ChunkBitmap(chunkCount: manifest.chunks.count)
                for (index, chunk) in manifest.chunks.enumerated() where !file.presentChunks.contains(index) {
                    if try !copyLocally(chunk, index: index, into: file, from: places[chunk.hash] ?? []) { missing.insert(index) }
                }
                prepared.plan.missing[hash] = missing
            }
        } catch {
            for file in prepared.files.values { file.discardIfCreated() }
            throw error
        }
        return prepared
    }

    /// What `asset` adds on disk: every placement file not in place, less the chunks a
    /// partial of its content already holds — counted once per content, and not for
    /// contents in `counted` (brought by an asset taken before it).
    /// - Returns: the bytes, and the contents whose partials it counted (for `counted`,
    ///   once the asset is taken).
    private static func cost(
        of asset: PlacedAsset, inPlace rows: [[Bool]]?, files: [Hash256: IncomingFile], counted: Set<Hash256>
    ) -> (bytes: UInt64, brought: Set<Hash256>) {
        var bytes: UInt64 = 0
        var brought = Set<Hash256>()
        for (placementIndex, placement) in asset.placements.enumerated() {
            for (fileIndex, file) in placement.files.enumerated() where rows?[safe: placementIndex]?[safe: fileIndex] != true {
                bytes += file.manifest.size
                let hash = file.manifest.fileHash
                guard let incoming = files[hash], !counted.contains(hash), brought.insert(hash).inserted else { continue }
                bytes -= min(bytes, incoming.presentByteCount)
            }
        }
        return (bytes, brought)
    }

    /// Takes the offer's assets in order while they fit in `room` and refuses
    /// the others; their contents' `IncomingFile`s are let go unless a taken
    /// asset shares them. A partial they adopted stays for a later push.
    /// - Throws: the whole offer's refusal when no asset that needs room fits.
    private func leaveOut(_ assets: [PlacedAsset], thatDoNotFit room: StagingArea.Room, from prepared: inout PreparedOffer) throws(ReceiveError) {
        var left = room.usable
        var counted = Set<Hash256>()
        var taken = 0
        var total: UInt64 = 0
        for asset in assets {
            let (cost, brought) = Self.cost(of: asset, inPlace: prepared.plan.inPlace[asset.contentID], files: prepared.files, counted: counted)
            total += cost
            if cost <= left {
                left -= cost
                if cost > 0 { taken += 1 }
                counted.formUnion(brought)
            } else {
                // Said with the room left once the assets taken before it are counted.
                var remaining = room
                remaining.available -= min(remaining.available, room.usable - left)
                prepared.plan.refused[asset.contentID] = remaining.refusal(needing: cost)
            }
        }
        guard taken > 0 else { throw room.refusal(needing: total) }
        let kept = Set(assets.filter { prepared.plan.refused[$0.contentID] == nil }.flatMap { $0.placements.flatMap { $0.files.map(\.manifest.fileHash) } })
        prepared.files = prepared.files.filter { kept.contains($0.key) }
        for contentID in prepared.plan.refused.keys { prepared.plan.inPlace[contentID] = nil }
    }

    /// For every placement file of `assets`, in order: whether the library already
    /// holds exactly this file at its path — the scan cache knows the path under the
    /// same file hash, and the file still shows the status it had then. The file
    /// hash, not the chunk list, because it is what this device verified itself, by
    /// hashing the file or every byte it received. One `fstatat` per file (on a
    /// first push most names do not exist yet, and nothing more is asked), then one
    /// read of the scan cache for the files that do.
    private func inPlace(_ assets: [PlacedAsset], leavingToSync tracked: Set<RelativePath>?) -> [Bool] {
        let manifests = assets.flatMap { $0.placements.flatMap { $0.files.map(\.manifest) } }
        if let tracked {
            // Left to the sync: a path its history knows, or one where anything stands now.
            return manifests.map { manifest in
                guard let path = try? LibraryPath.validate(manifest.path) else { return false }
                if tracked.contains(path.relativePath) { return true }
                return (try? directory.root.statusOfEntry(named: path.string, path.description)) != nil
            }
        }
        guard let scanCache else { return manifests.map { _ in false } }
        let onDisk = manifests.map { manifest -> (path: RelativePath, status: FileStatus)? in
            guard let path = try? LibraryPath.validate(manifest.path),
                  let status = try? directory.root.statusOfEntry(named: path.string, path.description),
                  status.kind == .regular, status.size == manifest.size
            else { return nil }
            return (path.relativePath, status)
        }
        let known = (try? scanCache.fileHashes(paths: onDisk.compactMap { $0?.path })) ?? [:]
        return zip(manifests, onDisk).map { manifest, found in
            guard let found, let entry = known[found.path] else { return false }
            return entry.fileHash == manifest.fileHash && entry.isUnchanged(found.status)
        }
    }

    /// A chunk of this library, read now and checked against `hash`: what a trusted peer
    /// repairing its own copy asks for (`ChunkRequest`). Nil when no indexed file still
    /// holds those bytes (changed, damaged, gone).
    package func verifiedChunk(hash: Hash256, length: UInt32) -> [UInt8]? {
        guard let chunkIndex, let locations = try? chunkIndex.locations(of: hash) else { return nil }
        for location in locations where location.length == length {
            guard let path = try? LibraryPath.validate(location.path), let file = try? directory.openFileForReading(path),
                  let status = try? file.status(path.description), location.offset <= status.size,
                  UInt64(length) <= status.size - location.offset,
                  let bytes = try? file.read(count: Int(length), at: location.offset, path.description), bytes.count == Int(length),
                  ContentHash.chunk(bytes) == hash
            else { continue }
            return bytes
        }
        return nil
    }

    private func copyLocally(_ chunk: ChunkRef, index: Int, into file: IncomingFile, from locations: [ChunkLocation]) throws(ReceiveError) -> Bool {
        for location in locations where location.length == chunk.length {
            if try file.copyChunk(at: index, from: .library(location)) { return true }
        }
        return false
    }

    /// Lands every placement of an asset in one step (all or nothing, see
    /// `LibraryInstaller`): a copy of a staged content for each file that
    /// shares it with others, the staged file itself for the last one, each
    /// with its placement's modification time and durable before it is renamed in.
    /// - Parameter staged: the staged contents the order names.
    /// - Returns: per placement, per file, what happened — in the order's order.
    package func install(_ order: InstallOrder, staged: [Hash256: StagedFile]) throws(ReceiveError) -> [InstalledFile] {
        try install([(order, staged)])[0].get()
    }

    /// Lands a group of assets with two durability barriers for all of them,
    /// where one per file cost a disk flush each (thousands for a folder of
    /// small files): every copy is made and given its mtime; the file system is
    /// synced; every asset is renamed into place (each all or nothing); the
    /// file system is synced again — only then is any of them reported stored.
    /// Orders run in the given order: one that copies a content comes before
    /// the one that takes it.
    ///
    /// `AssetInstallQueue` runs the same phases pipelined, one barrier serving
    /// two groups (see `prepareGroup`).
    /// - Returns: one result per order, in order.
    package func install(_ group: [(order: InstallOrder, staged: [Hash256: StagedFile])]) -> [Result<[InstalledFile], ReceiveError>] {
        let prepared = prepareGroup(group)
        let landed = land(prepared, after: barrier())
        return complete(landed, after: barrier())
    }

    /// Syncs the library's file system: the durability barrier between the
    /// phases of group installs.
    package func barrier() -> Result<Void, ReceiveError> {
        Result { () throws(ReceiveError) in try staging.syncFileSystem() }
    }

    /// A group whose copies are made and given their mtimes, waiting for a
    /// barrier before it may be renamed in.
    package struct PreparedGroup {
        fileprivate var orders: [InstallOrder]
        fileprivate var prepared: [Result<PreparedInstall, ReceiveError>]
    }

    /// A group renamed into place, waiting for a barrier before anyone may
    /// hear it is stored.
    package struct LandedGroup {
        fileprivate var results: [Result<[InstalledFile], ReceiveError>]
        fileprivate var landed: [(order: InstallOrder, ready: PreparedInstall)]
    }

    /// Phase one: copies first (a staged file must still be there for them),
    /// then the files taken; each gets its placement's mtime, nothing synced.
    /// The barrier that follows may be the one that also makes the previous
    /// group's renames durable: that group is complete, this one may land.
    package func prepareGroup(_ group: [(order: InstallOrder, staged: [Hash256: StagedFile])]) -> PreparedGroup {
        PreparedGroup(orders: group.map(\.order), prepared: group.map { prepare($0.order, staged: $0.staged) })
    }

    /// Phase two, after a barrier: every asset is renamed into place, each all
    /// or nothing. If the barrier failed, nothing is: the group fails.
    package func land(_ group: PreparedGroup, after barrier: Result<Void, ReceiveError>) -> LandedGroup {
        var result = LandedGroup(results: [], landed: [])
        let directories = LibraryInstaller.DirectoryCache()
        for (order, preparation) in zip(group.orders, group.prepared) {
            switch (barrier, preparation) {
            case let (_, .failure(error)), let (.failure(error), _):
                if case let .success(ready) = preparation { ready.discard() }
                result.results.append(.failure(error))
            case var (.success, .success(ready)):
                do {
                    let installed = try installer.install(
                        ready.toPlace, syncingDirectories: false, cache: directories, conflictTag: order.asset.contentID.hash,
                        statuses: &ready.landedStatuses)
                    for (position, outcome) in zip(ready.positions, installed) { ready.slots[position.placement][position.file] = outcome }
                    result.results.append(.success(ready.slots.flatMap { $0.compactMap { $0 } }))
                    result.landed.append((order, ready))
                } catch {
                    // The installer moved back what it had placed; the staged copies, and the
                    // contents this asset took, are no use to anyone now.
                    ready.discard()
                    result.results.append(.failure(error))
                }
            }
        }
        return result
    }

    /// Phase three, after the barrier that made the renames durable: the
    /// results, and the new files entered in the index.
    package func complete(_ group: LandedGroup, after barrier: Result<Void, ReceiveError>) -> [Result<[InstalledFile], ReceiveError>] {
        if case let .failure(error) = barrier {
            return group.results.map { $0.flatMap { _ in .failure(error) } }
        }
        recordInIndex(group.landed)
        return group.results
    }

    /// One asset made ready to rename into place: its staged files with their paths.
    fileprivate struct PreparedInstall {
        var toPlace: [(StagedFile, LibraryPath)] = []
        var positions: [(placement: Int, file: Int)] = []
        var slots: [[InstalledFile?]]
        /// Per file of `toPlace`: its status right after its rename (`LibraryInstaller.install`).
        var landedStatuses: [FileStatus?] = []
        /// Copies made for it, and contents it took: what to delete if it fails.
        var owned: [StagedFile] = []

        func discard() {
            for file in owned { try? file.discard() }
        }
    }

    /// Copies first (the staged file must still be there for them), then the
    /// files taken; each gets its placement's mtime, not yet synced.
    private func prepare(_ order: InstallOrder, staged: [Hash256: StagedFile]) -> Result<PreparedInstall, ReceiveError> {
        let placements = order.asset.placements
        var ready = PreparedInstall(slots: placements.map { [InstalledFile?](repeating: nil, count: $0.files.count) })
        var taken: [(placement: Int, file: Int, staged: StagedFile)] = []
        do throws(ReceiveError) {
            for (p, placement) in placements.enumerated() {
                for (f, file) in placement.files.enumerated() {
                    let path = try Self.validated(file.manifest.path)
                    switch order.sources[p][f] {
                    case .inPlace:
                        ready.slots[p][f] = .alreadyPresent(path)
                    case let .copy(hash):
                        guard let source = staged[hash] else { throw ReceiveError.stagedFileMissing(fileHash: hash) }
                        let copy = try source.duplicate()
                        ready.owned.append(copy)
                        try copy.prepareForInstall(modificationTimeNs: file.manifest.modificationTimeNs,
                                                   mode: directory.modes.fileMode(sourcePermissions: file.manifest.permissions), syncing: false)
                        ready.toPlace.append((copy, path))
                        ready.positions.append((p, f))
                    case let .take(hash):
                        guard let source = staged[hash] else { throw ReceiveError.stagedFileMissing(fileHash: hash) }
                        ready.owned.append(source)
                        taken.append((p, f, source))
                    }
                }
            }
            for (p, f, source) in taken {
                let file = placements[p].files[f]
                try source.prepareForInstall(modificationTimeNs: file.manifest.modificationTimeNs,
                                             mode: directory.modes.fileMode(sourcePermissions: file.manifest.permissions), syncing: false)
                ready.toPlace.append((source, try Self.validated(file.manifest.path)))
                ready.positions.append((p, f))
            }
            return .success(ready)
        } catch {
            ready.discard()
            return .failure(error)
        }
    }

    /// Newly landed files become local chunk sources for the next transfer (a rename, a resend).
    /// A file whose chunk list is only the peer's word is recorded all the same: the chunk
    /// index is a hint re-verified on every use, and the scan cache row proves (by file hash)
    /// that the file is in place — but it is marked, so that sending it on checks each chunk.
    /// Files that were already in place keep their rows (the offer's chunk list must not
    /// overwrite them). One transaction per store for the whole group.
    private func recordInIndex(_ landed: [(order: InstallOrder, ready: PreparedInstall)]) {
        guard chunkIndex != nil || scanCache != nil else { return }
        var records: [IndexedFile] = []
        for (order, ready) in landed {
            for (((stagedFile, _), position), landedStatus) in zip(zip(ready.toPlace, ready.positions), ready.landedStatuses) {
                guard let result = ready.slots[position.placement][position.file] else { continue }
                if case .alreadyPresent = result { continue }
                let path = result.storedPath
                // Taken right after the rename: a change made to the file since would
                // only make this row stale (the next scan hashes it again), never vouch for it.
                guard let status = landedStatus, status.kind == .regular else { continue }
                var manifest = order.asset.placements[position.placement].files[position.file].manifest
                manifest.path = path.relativePath
                manifest.modificationTimeNs = status.modificationTimeNs
                let identifier = stagedFile.embeddedIdentifier.forFile(
                    atPath: path.string, readingIfUnknown: self.directory.rootPath + "/" + path.string)
                // Every chunk was verified against the chunk list before the file was renamed in.
                records.append(IndexedFile(manifest: manifest, inode: status.inode, contentIdentifier: identifier,
                                           changeTimeNs: status.changeTimeNs))
            }
        }
        try? chunkIndex?.recordAll(records)
        try? scanCache?.storeAll(records)
    }

    private static func validated(_ path: RelativePath) throws(ReceiveError) -> LibraryPath {
        do { return try LibraryPath.validate(path) } catch { throw .pathRejected(error) }
    }
}
