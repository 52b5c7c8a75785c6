import Foundation
import Testing
@testable import LFSyncContent
@testable import LFSyncCrypto
@testable import LFSyncSystem

/// A household of 3–5 devices driven through generated histories — edits, concurrent edits
/// of one path, creations, renames, deletions, devices that sync with only some of the
/// others for a while (partitions, offline), syncs cut short (a crash between two paths),
/// stale and repeated answers (old snapshots delivered late or twice), clocks that disagree
/// — through the production planner (`LocalChanges`, `Reconciliation`, `PathSync.plan`) on
/// an in-memory disk. After every run, once every device has synced with every other until
/// nothing changes:
///
/// - *convergence*: every device holds the same paths with the same bytes (conflict copies
///   included) — and an archive (a device that keeps what it received when others delete
///   it: `retain`), exactly that plus the files it kept;
/// - *no lost update*: every version a user made is, at the end, a file somewhere (at its
///   path or as a conflict copy), unless a later change was made by someone who had seen it
///   (what that replaced went to a versions area);
/// - *no resurrection*: no path ends with a file its own deletion had superseded;
/// - *conflicts only for concurrency*: a path whose every edit was made on a device that had
///   the latest version of it never gets a conflict copy.
///
/// 400 seeds in `make test`; `LFSYNC_SEEDS=N` for more, `LFSYNC_SEED=N` replays one and
/// `LFSYNC_TRACE=1` prints every step. Each planted bug (`PathSync.PlantedBug`) is found.
@Suite struct PathSyncModelTests {
    static let seedCount = Int(ProcessInfo.processInfo.environment["LFSYNC_SEEDS"] ?? "") ?? 400
    static var seeds: [UInt64] {
        if let one = ProcessInfo.processInfo.environment["LFSYNC_SEED"].flatMap(UInt64.init) { return [one] }
        return (0..<UInt64(seedCount)).map { $0 &* 0x9E37_79B9 &+ 1 }
    }
    static let trace = ProcessInfo.processInfo.environment["LFSYNC_TRACE"] != nil

    /// A content: a number, hashed to stand for a file hash.
    static func hash(_ content: Int) -> Hash256 {
        ContentHash.chunk(Array("content \(content)".utf8))
    }

    struct Device {
        let id: UInt64
        let clockSkew: Int64
        var files: [RelativePath: Int] = [:]
        var history: [RelativePath: PathHistoryRow] = [:]
        /// What the versions area holds.
        var versions: [Int] = []
    }

    struct Household {
        var devices: [Device]
        var now: Int64 = 1_000_000
        var nextContent = 1
        var contentOf: [Hash256: Int] = [:]
        /// Every version a user made (a scan found), and whether a later change was made by
        /// someone who had seen it (then it may be gone: superseded, not lost).
        var edits: [(path: RelativePath, vector: VersionVector, content: Int, superseded: Bool)] = []
        /// Per path, every deletion made by a user (its vector).
        var deletions: [RelativePath: [VersionVector]] = [:]
        /// Paths with an edit made on a device that did not have the latest version of them.
        var concurrentlyEdited = Set<RelativePath>()
        /// Snapshots of devices' histories, delivered late (stale) or twice.
        var snapshots: [(device: Int, history: [RelativePath: PathHistoryRow])] = []
        var bug: PathSync.PlantedBug?
        /// A device that keeps what it received when others delete it (it does not mirror deletions).
        var archive: Int?
        var log: [String] = []

        mutating func newContent() -> Int {
            defer { nextContent += 1 }
            contentOf[PathSyncModelTests.hash(nextContent)] = nextContent
            return nextContent
        }

        func content(_ hash: Hash256) -> Int { contentOf[hash] ?? -1 }

        /// The device's scan: its disk against its history (what `lfsync` does before a sync).
        mutating func scan(_ index: Int) {
            now += 1
            var device = devices[index]
            let scanned = device.files.mapValues { PathSyncModelTests.hash($0) }
            let changes = LocalChanges.changes(history: device.history, scanned: scanned, device: device.id, now: now + device.clockSkew) { _ in false }
            for (path, row) in changes {
                // A change (an edit, a creation, a deletion) by a device that had not seen the latest
                // version of the path: concurrency, where a conflict copy may follow.
                let latest = devices.compactMap { $0.history[path]?.version.vector }.reduce(VersionVector()) { $0.merged(with: $1) }
                let before = device.history[path]?.version.vector ?? VersionVector()
                if before != latest { concurrentlyEdited.insert(path) }
                if row.version.isDeleted { deletions[path, default: []].append(row.version.vector) }
                // This change was made by someone who had seen every version up to `before`.
                for index in edits.indices where edits[index].path == path && [.older, .equal].contains(edits[index].vector.compared(to: before)) {
                    edits[index].superseded = true
                }
                if let hash = row.version.fileHash { edits.append((path, row.version.vector, content(hash), false)) }
                device.history[path] = row
            }
            devices[index] = device
        }

        /// Device `a` takes device `b`'s history (or a stale snapshot of it), path by path,
        /// stopping after `limit` paths (a crash mid-sync).
        mutating func sync(_ a: Int, from b: Int, snapshot: [RelativePath: PathHistoryRow]? = nil, limit: Int = .max) {
            scan(a)
            scan(b)
            let theirs = snapshot ?? devices[b].history
            snapshots.append((b, devices[b].history))
            var applied = 0
            for (path, row) in theirs.sorted(by: { $0.key < $1.key }) {
                guard applied < limit else {
                    if PathSyncModelTests.trace { log.append("  \(a) crashed after \(applied) paths") }
                    return
                }
                applied += 1
                now += 1
                var device = devices[a]
                let ours = device.history[path]
                let plan = PathSync.plan(path: path, ours: ours, theirs: row.version, deletionsAllowed: a != archive, device: device.id,
                                         now: now + device.clockSkew, history: { device.history[$0] }, plantedBug: bug)
                if PathSyncModelTests.trace, plan.action != .keep { log.append("  \(a)<-\(b) \(path): \(plan.action)") }
                // A conflict's loser lives on beside the path: its version is now that copy's.
                if case let .conflict(_, _, loser) = plan.action, let hash = loser.fileHash {
                    for (copy, row) in plan.rows where copy != path {
                        // (The loser's version may be a resolution of an earlier conflict: same bytes, newer vector.)
                        for index in edits.indices where edits[index].path == path && edits[index].content == content(hash) { edits[index].superseded = true }
                        edits.append((copy, row.version.vector, content(hash), false))
                    }
                }
                for change in plan.changes {
                    switch change {
                    case let .put(at, hash):
                        if let old = device.files[at] { device.versions.append(old) }
                        device.files[at] = content(hash)
                    case let .remove(at, _):
                        if let old = device.files.removeValue(forKey: at) { device.versions.append(old) }
                    case let .move(from, to, _):
                        if let old = device.files[to] { device.versions.append(old) }
                        device.files[to] = device.files.removeValue(forKey: from)
                    }
                }
                for (changed, newRow) in plan.rows { device.history[changed] = newRow }
                devices[a] = device
            }
        }
    }

    /// One generated run; the invariants it broke (empty when none).
    static func run(seed: UInt64, bug: PathSync.PlantedBug? = nil) -> [String] {
        var random = SplitMix64(seed: seed)
        func pick(_ n: Int) -> Int { Int(random.next() % UInt64(n)) }
        let count = 3 + pick(3)
        var home = Household(devices: (0..<count).map { Device(id: UInt64(0x1000 * ($0 + 1)), clockSkew: Int64(pick(5000)) - 2500) })
        home.bug = bug
        if pick(3) == 0 { home.archive = 0 }
        let paths = (0..<4).map { RelativePath("DCIM/IMG_\($0).JPG") } + [RelativePath("notes.txt")]
        // Which pairs can talk this run (a partition keeps some apart until the end).
        let partitioned = pick(3) == 0 ? Set([0, 1]) : Set<Int>()
        for step in 0..<(20 + pick(40)) {
            let device = pick(count)
            switch pick(10) {
            case 0, 1:  // edit or create
                let path = paths[pick(paths.count)]
                let content = home.newContent()
                home.devices[device].files[path] = content
                if trace { home.log.append("\(step): \(device) writes \(path) = \(content)") }
            case 2:  // delete
                let present = home.devices[device].files.keys.sorted()
                guard !present.isEmpty else { continue }
                let path = present[pick(present.count)]
                home.devices[device].files[path] = nil
                if trace { home.log.append("\(step): \(device) deletes \(path)") }
            case 3:  // rename
                let present = home.devices[device].files.keys.sorted()
                guard !present.isEmpty else { continue }
                let from = present[pick(present.count)], to = paths[pick(paths.count)]
                guard from != to, home.devices[device].files[to] == nil else { continue }
                home.devices[device].files[to] = home.devices[device].files.removeValue(forKey: from)
                if trace { home.log.append("\(step): \(device) renames \(from) -> \(to)") }
            case 4:  // a stale answer, delivered late or twice
                guard !home.snapshots.isEmpty else { continue }
                let old = home.snapshots[pick(home.snapshots.count)]
                guard old.device != device else { continue }
                if trace { home.log.append("\(step): \(device) gets a stale answer from \(old.device)") }
                home.sync(device, from: old.device, snapshot: old.history)
            default:  // a sync, sometimes cut short
                let other = pick(count)
                guard other != device, !(partitioned.contains(device) && partitioned.contains(other)) else { continue }
                let limit = pick(4) == 0 ? pick(3) : Int.max
                if trace { home.log.append("\(step): \(device) syncs from \(other)\(limit < .max ? " (crashes)" : "")") }
                home.sync(device, from: other, limit: limit)
            }
        }
        // Everyone online, until nothing changes.
        for round in 0..<12 {
            let before = home.devices.map { ($0.files, $0.history) }
            for a in 0..<count { for b in 0..<count where a != b { home.sync(a, from: b) } }
            if home.devices.map({ ($0.files, $0.history) }).elementsEqual(before, by: { $0.0 == $1.0 && $0.1 == $1.1 }) { break }
            if round == 11 { home.log.append("did not settle in 12 rounds") }
        }
        var broken: [String] = []
        // Every device but an archive holds the same; the archive holds that and what it kept.
        let mirrors = home.devices.indices.filter { $0 != home.archive }
        let reference = home.devices[mirrors[0]].files
        for index in mirrors where home.devices[index].files != reference {
            let device = home.devices[index]
            broken.append("convergence: device \(device.id) holds \(device.files.sorted { $0.key < $1.key }), device \(home.devices[mirrors[0]].id) \(reference.sorted { $0.key < $1.key })")
        }
        if let archive = home.archive {
            let kept = home.devices[archive]
            for (path, content) in reference where kept.files[path] != content {
                broken.append("archive: lacks \(path) = \(content)")
            }
            for (path, content) in kept.files where reference[path] == nil && kept.history[path]?.retainedHash != PathSyncModelTests.hash(content) {
                broken.append("archive: holds \(path) = \(content), which is not a file it kept from a deletion")
            }
        }
        // A version nobody who saw it changed must still be a file somewhere (at its path,
        // or beside it as a conflict copy): a versions area alone is not enough — no one chose
        // to replace it.
        let current = Set(home.devices.flatMap { $0.files.values })
        for edit in home.edits where !edit.superseded && !current.contains(edit.content) {
            broken.append("lost update: \(edit.path) = \(edit.content) \(edit.vector) is no file anywhere, and nobody who saw it changed it")
        }
        for (path, row) in home.devices[mirrors[0]].history where !row.version.isDeleted {
            for deleted in home.deletions[path] ?? [] where [.older, .equal].contains(row.version.vector.compared(to: deleted)) {
                broken.append("resurrection: \(path) holds \(row.version) over its deletion \(deleted)")
            }
        }
        for path in reference.keys where path.string.contains("(conflict ") {
            let original = RelativePath(path.string.replacingOccurrences(of: #" \(conflict [0-9a-f]{8}\)"#, with: "", options: .regularExpression))
            if !home.concurrentlyEdited.contains(original) {
                broken.append("conflict without concurrency: \(path)")
            }
        }
        if !broken.isEmpty, trace { print(home.log.joined(separator: "\n")) }
        return broken
    }

    @Test func generatedHistoriesConvergeWithoutLosingOrResurrecting() {
        for seed in Self.seeds {
            let broken = Self.run(seed: seed)
            #expect(broken.isEmpty, "seed \(seed) (replay: LFSYNC_SEED=\(seed) LFSYNC_TRACE=1): \(broken.prefix(3))")
            if !broken.isEmpty { return }
        }
    }

    @Test(arguments: [PathSync.PlantedBug.conflictLoserDropped, .concurrentTakenAsFastForward])
    func aPlantedBugIsFound(_ bug: PathSync.PlantedBug) {
        let found = Self.seeds.first { !Self.run(seed: $0, bug: bug).isEmpty }
        #expect(found != nil, "no seed of \(Self.seeds.count) found \(bug)")
    }

    // MARK: - The function itself, by hand

    static func version(_ content: Int?, _ pairs: [(UInt64, UInt64)], at: Int64 = 0, by: UInt64 = 1) -> PathVersion {
        PathVersion(content: content.map { .file(hash($0)) } ?? .deleted, vector: VersionVector(pairs.map { ($0.0, $0.1) }), changedAt: at, changedBy: by)
    }

    @Test func theReconciliationDecidesAsTheSpecificationSays() {
        let ours = Self.version(1, [(1, 2)]), newer = Self.version(2, [(1, 2), (2, 1)])
        #expect(Reconciliation.decide(ours: ours, theirs: newer, deletionsAllowed: true, device: 1) == .take(newer))
        #expect(Reconciliation.decide(ours: newer, theirs: ours, deletionsAllowed: true, device: 1) == .keep)
        #expect(Reconciliation.decide(ours: ours, theirs: ours, deletionsAllowed: true, device: 1) == .keep)
        let deleted = Self.version(nil, [(1, 2), (2, 1)])
        #expect(Reconciliation.decide(ours: ours, theirs: deleted, deletionsAllowed: true, device: 1) == .delete(deleted))
        #expect(Reconciliation.decide(ours: ours, theirs: deleted, deletionsAllowed: false, device: 1) == .retain(deleted))
        // Concurrent: the later change keeps the path, whichever side learns it first.
        let mine = Self.version(3, [(1, 3)], at: 100, by: 1), yours = Self.version(4, [(1, 2), (2, 1)], at: 200, by: 2)
        guard case let .conflict(keep, true, loser) = Reconciliation.decide(ours: mine, theirs: yours, deletionsAllowed: true, device: 1),
              case let .conflict(keepBack, false, loserBack) = Reconciliation.decide(ours: yours, theirs: mine, deletionsAllowed: true, device: 2) else {
            Issue.record("concurrent edits are not a conflict")
            return
        }
        #expect(keep.fileHash == keepBack.fileHash && loser == loserBack && keep.fileHash == yours.fileHash && loser == mine)
        // A new version by the device that resolved it: it has seen both, and one change more.
        #expect(keep.vector == VersionVector([(1, 4), (2, 1)]) && keepBack.vector == VersionVector([(1, 3), (2, 2)]))
        // An edit concurrent with a deletion wins, on both sides, with no copy.
        let gone = Self.version(nil, [(1, 2), (2, 1)], at: 900, by: 2)
        #expect(Reconciliation.decide(ours: mine, theirs: gone, deletionsAllowed: true, device: 1) == .adopt(Self.version(3, [(1, 4), (2, 1)], at: 100, by: 1)))
        #expect(Reconciliation.decide(ours: gone, theirs: mine, deletionsAllowed: true, device: 2) == .take(Self.version(3, [(1, 3), (2, 2)], at: 100, by: 1)))
        #expect(Reconciliation.conflictPath(of: "DCIM/IMG_1.JPG", loser: mine)
                == RelativePath("DCIM/IMG_1 (conflict \(Self.hash(3).hex.prefix(8))).JPG"))
    }
}
