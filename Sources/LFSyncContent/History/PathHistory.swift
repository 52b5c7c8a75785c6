import LFSyncCrypto

/// What a device's ledger holds for one path of a library: the path's current version,
/// and — when this device kept a file its history says was deleted (an archive that does
/// not apply deletions) — the file hash of what it kept, so that its next scan does not
/// take the kept file for a new one.
package struct PathHistoryRow: Hashable, Sendable {
    package var version: PathVersion
    package var retainedHash: Hash256?

    package init(version: PathVersion, retainedHash: Hash256? = nil) {
        self.version = version
        self.retainedHash = retainedHash
    }

    /// The file hash the library should hold at the path: the version's, or what was retained.
    package var expectedOnDisk: Hash256? { version.fileHash ?? retainedHash }
}

/// The changes a scan shows, as new versions made by this device: a path new or changed
/// since its history was last written gets the next version of this device; a path gone
/// gets a deletion — unless it was left out on purpose (offloaded, excluded), which is
/// never a deletion.
package enum LocalChanges {
    /// - Parameters:
    ///   - scanned: every path the scan found, with its file hash.
    ///   - leftOut: paths absent on purpose (offloaded, excluded): never deleted by a scan.
    package static func changes(
        history: [RelativePath: PathHistoryRow], scanned: [RelativePath: Hash256], device: UInt64, now: Int64,
        leftOut: (RelativePath) -> Bool
    ) -> [RelativePath: PathHistoryRow] {
        var changed: [RelativePath: PathHistoryRow] = [:]
        for (path, hash) in scanned {
            guard let row = history[path] else {
                changed[path] = PathHistoryRow(version: PathVersion(content: .file(hash), vector: VersionVector().incremented(by: device),
                                                                    changedAt: now, changedBy: device))
                continue
            }
            if row.expectedOnDisk == hash { continue }
            changed[path] = PathHistoryRow(version: PathVersion(content: .file(hash), vector: row.version.vector.incremented(by: device),
                                                                changedAt: now, changedBy: device))
        }
        for (path, row) in history where scanned[path] == nil && row.expectedOnDisk != nil && !leftOut(path) {
            changed[path] = PathHistoryRow(version: PathVersion(content: .deleted, vector: row.version.vector.incremented(by: device),
                                                                changedAt: now, changedBy: device))
        }
        return changed
    }
}

/// A change to make to the library's files, from a reconciliation (`PathSync.plan`):
/// nothing is ever unlinked or overwritten — what leaves a path goes to the versions area.
package enum LibraryChange: Hashable, Sendable {
    /// Put the file with `fileHash` at `path` (fetched, or from bytes already here); what
    /// stands there (if anything) goes to the versions area.
    case put(path: RelativePath, fileHash: Hash256)
    /// Move the file at `path` to the versions area.
    case remove(path: RelativePath, fileHash: Hash256)
    /// Move this device's file at `from` to `to` (a conflict's losing file stepping aside).
    case move(from: RelativePath, to: RelativePath, fileHash: Hash256)
}

/// How one path of another device's history is applied here: the reconciliation's action
/// (`Reconciliation.decide`) as changes to the library and rows for the ledger, decided
/// without touching either, so the same plan runs on a disk (`lfsync sync`) and in the
/// model the tests drive through generated histories.
package enum PathSync {
    package struct Plan: Hashable, Sendable {
        package var action: Reconciliation.Action
        package var changes: [LibraryChange] = []
        package var rows: [RelativePath: PathHistoryRow] = [:]
    }

    /// Bugs the generated-history tests must find (`PathSyncModelTests`).
    package enum PlantedBug: Sendable { case conflictLoserDropped, concurrentTakenAsFastForward }

    package static func plan(
        path: RelativePath, ours: PathHistoryRow?, theirs: PathVersion, deletionsAllowed: Bool,
        device: UInt64, now: Int64, history: (RelativePath) -> PathHistoryRow?, plantedBug: PlantedBug? = nil
    ) -> Plan {
        var action = Reconciliation.decide(ours: ours?.version, theirs: theirs, deletionsAllowed: deletionsAllowed, device: device)
        if plantedBug == .concurrentTakenAsFastForward, case .conflict = action { action = .take(theirs) }
        var plan = Plan(action: action)
        switch action {
        case .keep:
            break
        case let .adopt(version):
            plan.rows[path] = PathHistoryRow(version: version, retainedHash: version.isDeleted ? ours?.retainedHash : nil)
        case let .take(version):
            guard let hash = version.fileHash else { break }
            if ours?.expectedOnDisk != hash { plan.changes.append(.put(path: path, fileHash: hash)) }
            plan.rows[path] = PathHistoryRow(version: version)
        case let .delete(version):
            if let hash = ours?.expectedOnDisk { plan.changes.append(.remove(path: path, fileHash: hash)) }
            plan.rows[path] = PathHistoryRow(version: version)
        case let .retain(version):
            plan.rows[path] = PathHistoryRow(version: version, retainedHash: ours?.expectedOnDisk)
        case let .conflict(keep, takeTheirs, loser):
            let copy = Reconciliation.conflictPath(of: path, loser: loser)
            guard let loserHash = loser.fileHash, let keptHash = keep.fileHash else { break }
            if plantedBug != .conflictLoserDropped {
                if takeTheirs {
                    plan.changes.append(.move(from: path, to: copy, fileHash: loserHash))
                } else {
                    plan.changes.append(.put(path: copy, fileHash: loserHash))
                }
                // The copy is a new version of its own path, made here: it travels like any.
                let before = history(copy)
                plan.rows[copy] = PathHistoryRow(version: PathVersion(
                    content: .file(loserHash), vector: (before?.version.vector ?? VersionVector()).incremented(by: device),
                    changedAt: now, changedBy: device))
            }
            if takeTheirs { plan.changes.append(.put(path: path, fileHash: keptHash)) }
            plan.rows[path] = PathHistoryRow(version: keep)
        }
        return plan
    }
}
