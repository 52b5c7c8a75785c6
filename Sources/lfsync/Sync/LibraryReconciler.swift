import Foundation
import LocalFirstSync
import LFSyncContent
import LFSyncCrypto
import LFSyncLanding
import LFSyncStore
import LFSyncSystem
import LFSyncWire

/// Applies another device's path versions to a library (PROTOCOL.md, "Syncing"): reads the
/// versions it changed since this device last applied its history, brings this library's
/// own history up to the disk first (an edit made here and not yet recorded is a version
/// like any, and is never overwritten unseen), decides each path with `PathSync.plan`, and
/// acts on the disk only on the file the scan checked:
///
/// - a fast-forward to their file replaces ours in one exchange; ours goes to the versions
///   area (`VersionsArea`), never unlinked;
/// - a deletion they made (when this device applies their deletions) moves ours there too,
///   only if the path still holds the version they deleted;
/// - two concurrent edits keep both: the winner at the path, the other beside it under the
///   conflict name every device gives it — when theirs wins, one exchange puts theirs at the
///   path and ours at the conflict name at once;
/// - a rename is a deletion plus a file whose bytes are here: built from this library's own
///   chunks, 0 bytes on the wire.
///
/// Bytes this library lacks are asked of the other device chunk by chunk (`FileRebuilder`),
/// only the chunks that changed. A version that cannot be applied now (its file changed
/// since the scan, its bytes unavailable, over `--max-delete`) is left for the next sync:
/// how far this device has applied the other's history stops before it.
struct LibraryReconciler {
    struct Options {
        /// Apply the other device's deletions (else record them and keep the files).
        var deletions: Bool
        var maxDeletions: UInt32 = WireMessage.SyncRequest.unlimited
        /// How the other device is named in `lfsync versions`.
        var peerName: String
    }

    struct Outcome {
        var status: WireMessage.SyncReply.Status = .synced
        var counts = WireMessage.SyncReply.Counts()
        var reason: String?
        /// Paths changed here, for the log and the tests.
        var changedPaths: [RelativePath] = []
    }

    let library: URL
    let index: LibraryIndex
    let exclusions: ScanExclusions
    let ledger: SyncStateStore
    let sync: LocalSync
    /// This device's short ID.
    let device: UInt64
    let retentionDays: Int

    /// Reads at most this many reports of another device's history in one sync (half a
    /// million paths, a bounded amount of memory whatever a peer sends); the rest comes with
    /// the next.
    static let maxReports = 128

    func run(with peer: Peer, _ options: Options) async -> Outcome {
        do {
            return try await apply(from: peer, options)
        } catch {
            var outcome = Outcome()
            outcome.status = .failed
            outcome.reason = "\(error)"
            return outcome
        }
    }

    /// A file of the library as the scan found it.
    private struct OnDisk {
        var hash: Hash256
        var manifest: FileManifest
        /// nil once lfsync put the file there in this run (nothing more is done to it here).
        var status: FileStatus?
    }

    private func apply(from peer: Peer, _ options: Options) async throws -> Outcome {
        let key = OffloadedFile.libraryKey(library)
        var outcome = Outcome()

        // 1. What they changed since we last applied their history.
        let progress = try await ledger.read { store throws(SQLiteError) in try store.pathProgress(library: key, peer: peer.ledgerKey) }
        var theirs: [RelativePath: WireMessage.PathStateEntry] = [:]
        var position = progress
        var reports = 0
        // Stopped at the cap with more to read: the reply says partial, and the asker comes back.
        var capped = false
        while true {
            let report = try await sync.pathStates(from: peer, after: position)
            // Another history than the one we read before: it was answered from its start.
            if let position, position.historyID != report.historyID { theirs = [:] }
            for entry in report.entries { theirs[entry.path] = entry }
            position = HistoryPosition(historyID: report.historyID, seq: report.through)
            reports += 1
            if !report.more { break }
            if reports >= Self.maxReports {
                capped = true
                break
            }
        }
        func finished(_ outcome: Outcome) -> Outcome {
            guard capped, outcome.status == .synced else { return outcome }
            var said = outcome
            said.status = .partial
            said.reason = outcome.reason ?? "read \(reports) reports of its changes, the most one sync takes: the rest comes with the next"
            return said
        }
        guard let through = position else { return outcome }
        // Nothing new from them, and no kept deletion to apply: the library is not even scanned.
        let keptDeletions = options.deletions ? try await ledger.read { store throws(SQLiteError) in try store.hasRetainedDeletions(library: key) } : false
        if theirs.isEmpty, !keptDeletions {
            if through != progress { try await ledger.write { store throws(SQLiteError) in try store.recordPathProgress(library: key, peer: peer.ledgerKey, through) } }
            return finished(outcome)
        }

        // 2. Our own history, up to the disk as it is now.
        let scan = try await LibraryScanner(root: library, cache: index.scanCache, chunkIndex: index.chunkIndex, exclusions: exclusions).scan()
        // Files changed moments ago count too (most often: what this push's offers just
        // placed): each is acted on only if it is still the file that was hashed.
        let recorded = try await HistoryRecorder(library: library, ledger: ledger, device: device, awaitingSync: sync.placementsAwaitingSync.paths())
            .record(scan, adopting: theirs.mapValues(\.version), settledOnly: false)
        if recorded.looksUnmounted {
            outcome.status = .failed
            outcome.reason = "the library \(library.path) looks unmounted or emptied (its .lfsync/library-id marker is missing, or no file is left): nothing was applied"
            return finished(outcome)
        }
        var history = recorded.history
        var files: [RelativePath: OnDisk] = [:]
        var byHash: [Hash256: FileManifest] = [:]
        for asset in scan.assets {
            for file in asset.files {
                let manifest = file.manifest
                let status = scan.settledStatus[manifest.path] ?? HistoryRecorder.status(of: manifest.path, in: library).flatMap {
                    $0.size == manifest.size && $0.modificationTimeNs == manifest.modificationTimeNs ? $0 : nil
                }
                files[manifest.path] = OnDisk(hash: manifest.fileHash, manifest: manifest, status: status)
                byHash[manifest.fileHash] = manifest
            }
        }
        let offloaded = Set(try await ledger.read { store throws(SQLiteError) in try store.offloaded(inLibrary: key) }.map(\.path))
        let rules = (try? exclusions.effectiveRules(forLibraryAt: library.path)) ?? IgnoreRules()

        // 3. One plan per path, in the order they made the changes.
        let now = Int64((Date().timeIntervalSince1970 * 1000).rounded())
        var plans: [(entry: WireMessage.PathStateEntry, path: LibraryPath, plan: PathSync.Plan)] = []
        var skipped: [String] = []
        for entry in theirs.values.sorted(by: { $0.seq < $1.seq }) {
            // A path this device cannot or will not hold is not applied, now or later.
            guard let path = try? LibraryPath.validate(entry.path) else {
                skipped.append("\(PrintablePath.escape(entry.path.string)): not a path a library can hold")
                continue
            }
            if rules.isExcludedWithAncestors(entry.path.string) || offloaded.contains(entry.path) { continue }
            let plan = PathSync.plan(path: entry.path, ours: history[entry.path], theirs: entry.version, deletionsAllowed: options.deletions,
                                     device: device, now: now, history: { history[$0] })
            plans.append((entry, path, plan))
        }
        var deferred: [UInt64: String] = [:]
        let deletions = plans.filter { if case .delete = $0.plan.action { true } else { false } }
        // Deletions recorded here before and kept (an earlier sync did not ask for them): a
        // sync that applies deletions applies them too, where the path still holds the file kept.
        let keptHere = options.deletions ? history.filter { path, row in
            row.version.isDeleted && row.retainedHash != nil && theirs[path] == nil && files[path]?.hash == row.retainedHash
        } : [:]
        let overLimit = deletions.count + keptHere.count > Int(options.maxDeletions)
        if overLimit {
            for item in deletions { deferred[item.entry.seq] = "\(deletions.count + keptHere.count) deletions, over the limit of \(options.maxDeletions) (--max-delete)" }
        }

        // 4. Every file to put somewhere, built in staging first — from this library's own
        // chunks before any file leaves its path (a rename is then a local copy), the rest
        // asked of them.
        let directory = try LibraryDirectory(path: library.path)
        let staging = try StagingArea(library: directory)
        var wanted: [(seq: UInt64, manifest: FileManifest)] = []
        for item in plans where deferred[item.entry.seq] == nil {
            guard let (target, hash) = Self.fileToPut(item.plan, path: item.entry.path) else { continue }
            if files[target]?.hash == hash { continue }
            var manifest: FileManifest
            if case let .file(sent) = item.entry.content, sent.fileHash == hash {
                manifest = sent
            } else if let local = byHash[hash] {
                manifest = local
            } else {
                deferred[item.entry.seq] = "its bytes are not here and \(peer.name) sent no chunk list"
                continue
            }
            manifest = FileManifest(path: target, size: manifest.size, modificationTimeNs: Self.time(of: item.entry, else: manifest),
                                    derivedFileHash: manifest.fileHash, chunks: manifest.chunks, permissions: Self.mode(of: item.entry, else: manifest))
            wanted.append((item.entry.seq, manifest))
        }
        var staged: [UInt64: StagedFile] = [:]
        let modes = NewFileModes()
        if !wanted.isEmpty {
            let rebuilder = FileRebuilder(staging: staging, sync: sync, peer: peer)
            do {
                try await rebuilder.rebuild(wanted.map(\.manifest), local: { _, _, chunk in RestoreOffloaded.localChunk(chunk, in: directory, index: index) }) { position, result in
                    let (seq, manifest) = wanted[position]
                    do {
                        let rebuilt = try result.get()
                        try rebuilt.staged.prepareForInstall(modificationTimeNs: manifest.modificationTimeNs,
                                                             mode: modes.fileMode(sourcePermissions: manifest.permissions), syncing: false)
                        staged[seq] = rebuilt.staged
                        outcome.counts.bytesFetched += rebuilt.bytesFetched
                    } catch {
                        deferred[seq] = "could not build it: \(error)"
                    }
                }
            } catch {
                for (seq, _) in wanted where staged[seq] == nil { deferred[seq] = "\(error)" }
            }
            try staging.syncFileSystem()
        }

        // 5. The acts, each on the checked file.
        let versions = VersionsArea(library: library)
        let stamp = VersionsArea.stamp()
        var rows: [RelativePath: PathHistoryRow] = [:]
        var keptVersions: [KeptVersion] = []
        for item in plans {
            let seq = item.entry.seq, path = item.path
            if deferred[seq] != nil {
                if let file = staged.removeValue(forKey: seq) { try? file.discard() }
                continue
            }
            let result: String?
            let file = staged.removeValue(forKey: seq)
            do {
                result = try act(item.plan, at: path, staged: file, files: &files,
                                 directory: directory, versions: versions, stamp: stamp, peerName: options.peerName, kept: &keptVersions)
            } catch {
                result = "\(error)"
            }
            if let reason = result {
                // Not placed: its staged copy goes (a placed one has left staging already).
                try? file?.discard()
                deferred[seq] = reason
                continue
            }
            rows.merge(item.plan.rows) { _, new in new }
            for (changed, row) in item.plan.rows { history[changed] = row }
            switch item.plan.action {
            case .take: outcome.counts.taken += 1; outcome.changedPaths.append(item.entry.path)
            case .delete: outcome.counts.deleted += 1; outcome.changedPaths.append(item.entry.path)
            case .retain: outcome.counts.retained += 1
            case let .conflict(_, takeTheirs, _):
                outcome.counts.conflicts += 1
                if takeTheirs { outcome.changedPaths.append(item.entry.path) }
            case .keep, .adopt: break
            }
        }
        for (path, row) in keptHere.sorted(by: { $0.key < $1.key }) where !overLimit {
            guard let libraryPath = try? LibraryPath.validate(path), let current = files[path], let status = current.status else { continue }
            let place = try versions.place(for: libraryPath, stamp: stamp, in: directory)
            guard try directory.moveAside(CheckedFile(path: libraryPath, status: status), to: place.keep) == nil else { continue }
            keptVersions.append(KeptVersion(stored: place.stored, path: path, fileHash: current.hash, size: current.manifest.size,
                                            keptAt: Date(), reason: .deleted, byDevice: options.peerName))
            rows[path] = PathHistoryRow(version: row.version)
            outcome.counts.deleted += 1
            outcome.changedPaths.append(path)
        }
        for file in staged.values { try? file.discard() }
        try? staging.syncFileSystem()

        // 6. The ledger: rows of what was applied, what went to the versions area, and how far
        // their history is applied — up to the first change left for later.
        let applied: HistoryPosition
        if let first = deferred.keys.min() {
            applied = HistoryPosition(historyID: through.historyID, seq: first - 1)
            outcome.status = .partial
            outcome.counts.deferred = UInt32(deferred.count)
            let example = deferred.sorted { $0.key < $1.key }.first.map { seq, reason in
                "\(PrintablePath.escape(theirs.values.first { $0.seq == seq }?.path.string ?? "?")): \(reason)"
            } ?? ""
            outcome.reason = "\(deferred.count) change\(deferred.count == 1 ? "" : "s") left for the next sync (\(example))"
        } else {
            applied = through
        }
        let newKept = keptVersions, newRows = rows
        try await ledger.write { store throws(SQLiteError) in
            try store.recordPathHistory(library: key, newRows)
            try store.recordKeptVersions(library: key, newKept)
            try store.recordPathProgress(library: key, peer: peer.ledgerKey, applied)
        }
        if !skipped.isEmpty, outcome.reason == nil { outcome.reason = "skipped \(skipped.count): \(skipped[0])" }
        await versions.prune(olderThan: retentionDays, ledger: ledger)
        if !outcome.changedPaths.isEmpty { sync.holdingsChanged() }
        return finished(outcome)
    }

    /// Carries out one plan on the disk; nil when done, else why it is left for later.
    private func act(
        _ plan: PathSync.Plan, at path: LibraryPath, staged: StagedFile?, files: inout [RelativePath: OnDisk],
        directory: LibraryDirectory, versions: VersionsArea, stamp: String, peerName: String, kept: inout [KeptVersion]
    ) throws -> String? {
        let relative = path.relativePath
        /// The file as the scan checked it (nil: still being written then, or put here by this run).
        func checked(_ path: LibraryPath) -> CheckedFile? { files[path.relativePath]?.status.map { CheckedFile(path: path, status: $0) } }
        switch plan.action {
        case .keep, .adopt, .retain:
            return nil
        case let .take(version):
            guard let hash = version.fileHash else { return nil }
            if files[relative]?.hash == hash { return nil }
            guard let staged else { return "its file was not built" }
            if let current = files[relative] {
                guard let check = checked(path) else { return "it was being written when the sync looked at it" }
                let place = try versions.place(for: path, stamp: stamp, in: directory)
                if let change = try staged.replace(check, keepingReplacedAt: place.keep) { return "changed here meanwhile (\(change))" }
                kept.append(KeptVersion(stored: place.stored, path: relative, fileHash: current.hash, size: current.manifest.size,
                                        keptAt: Date(), reason: .replaced, byDevice: peerName))
            } else {
                guard try staged.place(at: path, syncing: false) == .renamed else { return "a file appeared at its name meanwhile" }
            }
            files[relative] = OnDisk(hash: hash, manifest: files[relative]?.manifest ?? FileManifest(path: relative, contents: []), status: nil)
            return nil
        case let .delete(version):
            _ = version
            guard let current = files[relative] else { return nil }  // already gone
            guard let check = checked(path) else { return "it was being written when the sync looked at it" }
            let place = try versions.place(for: path, stamp: stamp, in: directory)
            if let change = try directory.moveAside(check, to: place.keep) { return "changed here meanwhile (\(change))" }
            kept.append(KeptVersion(stored: place.stored, path: relative, fileHash: current.hash, size: current.manifest.size,
                                    keptAt: Date(), reason: .deleted, byDevice: peerName))
            files[relative] = nil
            return nil
        case let .conflict(_, takeTheirs, loser):
            let copy = Reconciliation.conflictPath(of: relative, loser: loser)
            guard let copyPath = try? LibraryPath.validate(copy) else { return "its conflict name is not a valid path" }
            if takeTheirs {
                // Theirs to the path and ours to the conflict name in one exchange.
                guard let staged else { return "its file was not built" }
                guard let check = checked(path) else { return "it was being written when the sync looked at it" }
                if files[copy] != nil { return "its conflict name is taken" }
                let parent = try directory.openDirectory(copyPath.parentComponents, create: true).directory
                if let change = try staged.replace(check, keepingReplacedAt: (parent, copyPath.name)) { return "changed here meanwhile (\(change))" }
                files[copy] = files[relative].map { OnDisk(hash: $0.hash, manifest: $0.manifest, status: nil) }
                files[relative] = nil
            } else {
                // Ours stays; theirs goes beside it.
                guard let hash = loser.fileHash else { return nil }
                if files[copy]?.hash == hash { return nil }
                guard let staged else { return "its file was not built" }
                guard try staged.place(at: copyPath, syncing: false) == .renamed else { return "its conflict name is taken" }
                files[copy] = OnDisk(hash: hash, manifest: FileManifest(path: copy, contents: []), status: nil)
            }
            return nil
        }
    }

    /// The file a plan puts somewhere, and where: theirs at the path, or theirs at its
    /// conflict name when ours keeps the path.
    private static func fileToPut(_ plan: PathSync.Plan, path: RelativePath) -> (RelativePath, Hash256)? {
        switch plan.action {
        case let .take(version):
            return version.fileHash.map { (path, $0) }
        case let .conflict(keep, takeTheirs, loser):
            if takeTheirs { return keep.fileHash.map { (path, $0) } }
            return loser.fileHash.map { (Reconciliation.conflictPath(of: path, loser: loser), $0) }
        case .keep, .adopt, .delete, .retain:
            return nil
        }
    }

    private static func time(of entry: WireMessage.PathStateEntry, else manifest: FileManifest) -> Int64 {
        switch entry.content {
        case let .file(sent): sent.modificationTimeNs
        case let .fileHash(_, _, time, _) where time != 0: time
        default: manifest.modificationTimeNs
        }
    }

    private static func mode(of entry: WireMessage.PathStateEntry, else manifest: FileManifest) -> UInt32 {
        switch entry.content {
        case let .file(sent): sent.permissions
        case let .fileHash(_, _, _, mode) where mode != 0: UInt32(mode)
        default: manifest.permissions
        }
    }
}
