import Foundation
import LocalFirstSync
import LFSyncCrypto
import LFSyncSystem
import LFSyncContent
import LFSyncStore
import LFSyncLanding
import LFSyncTransport
import LFSyncTCP

/// `lfsync offload PATH... --copies N [--yes] [--no-proof] [--peers A,B] [--json]`:
/// frees space by deleting local files of assets that at least N other trusted devices
/// hold *now* — each of them answered this run's holding check "held and verified", by
/// default proving it over the asset's bytes — and nothing else.
///
/// The safety case, in order: an asset goes whole (a Live Photo's pair, a RAW+JPEG pair
/// and their sidecars are one asset) or not at all; only answers from devices that stayed
/// connected through their check count, each device once however it was reached; a
/// device whose copy is damaged answers "changed", not "held"; a proof that does not match
/// our own bytes (read again for it) counts as no copy; a file that changed since its
/// scan, or whose status changed before its turn came, stays; every file is recorded as
/// offloaded, with its holders, and committed before it is removed, so a kill at any
/// moment leaves each file present or recorded. Nothing changes on any other device.
struct OffloadCommand {
    let arguments: ParsedArguments
    let console: Console
    let home = StateHome()

    struct Removal: Encodable {
        var path: String
        var files: [String]
        var bytes: UInt64
        var holders: [String]
    }

    struct Kept: Encodable {
        var path: String
        var reason: String
    }

    struct Report: Encodable {
        var library: String
        var copies: Int
        var proof: Bool
        /// Devices whose answers counted (connected and checked to the end).
        var devicesChecked: [String]
        /// Removed (with --yes), or what would be removed.
        var removed: [Removal]
        var kept: [Kept]
        var bytesFreed: UInt64
        var dryRun: Bool
    }

    func run() async throws -> ExitCode {
        guard let copiesText = try arguments.value(Self.copies) else {
            throw UsageError(message: "offload needs --copies N", hint: "How many other devices must hold an asset before it is deleted here, e.g. --copies 2.")
        }
        guard let copies = Int(copiesText), copies >= 1, copies <= 64 else {
            throw UsageError(message: "--copies needs a number from 1 to 64, not '\(copiesText)'", hint: nil)
        }
        guard !arguments.positionals.isEmpty else { throw UsageError(message: "missing argument PATH", hint: "Run 'lfsync offload --help' for usage.") }
        let proof = !arguments[Self.noProof]
        let timeout = Duration.seconds(try arguments.value(Self.timeout) ?? 300)
        let apply = arguments[Self.yes]
        let identity = try home.identity()
        let config = try DeviceConfig.load(from: home.configURL, ownID: identity.deviceID)
        let ledger = try home.ledger()
        let resolver = PeerResolver(config: config, localDeviceID: identity.deviceID)
        let named = try arguments.values(Self.peers).flatMap { (list: String) in list.split(separator: ",").map(String.init) }
        let targets = try (named.isEmpty ? config.peers.map(\.name) : named).map { try resolver.resolve($0) }
        if let stranger = targets.first(where: { $0.trusted == nil }) {
            throw UsageError(message: "offload counts only trusted devices ('\(stranger.label)' is not one)", hint: "'lfsync trust DEVICE-ID' first.")
        }
        guard targets.count >= copies else {
            throw CommandFailure(message: "--copies \(copies) needs at least \(copies) trusted device\(copies == 1 ? "" : "s") to ask; \(targets.count) known ('lfsync trust' adds one)", exitCode: .usage)
        }
        let selections = try Self.selections(arguments.positionals, home: home)
        // Nothing may be received into a library while its files are being removed.
        let locks = try selections.map { try LibraryLock.forReceiving(into: $0.library) }
        defer { withExtendedLifetime(locks) {} }

        let sync = LocalSync(identity: identity, store: ledger, configuration: .init(deviceName: config.name, trust: config.trustPolicy), transport: TCPTransport())
        let peers = await PeerConnector.connectAll(targets, sync: sync, config: config, console: console)
        // Devices by the names this device gave them (`lfsync trust --name`), not the names they gave themselves.
        let name = { (peer: Peer) in config.trusted(peer.deviceID)?.name ?? peer.name }
        var reports: [Report] = []
        var exit = ExitCode.success
        // Inodes this run removed a name of, with their status after it: their other names
        // (hard links) are checked against that, the change time being lfsync's own doing.
        var relinked: [FileKey: FileStatus] = [:]
        for selection in selections {
            let library = selection.library
            let index = try await HashUpgradeNotice.upgradedIndex(for: library, home: home, ledger: ledger, exclusions: ScanExclusions(), console: console)
            let scanner = LibraryScanner(root: library, cache: index.scanCache, chunkIndex: index.chunkIndex)
            var scan = try await scanner.scan()
            // Whole assets: one with any file in a named folder or file goes (or stays) whole.
            var assets = scan.assets.filter { asset in asset.files.contains { selection.contains($0.manifest.path) } }
            // A file changed moments before it was hashed cannot be told from one changed just
            // after (file times tick coarsely): such files are hashed again once they settled.
            let unsettled = assets.reduce(0) { $0 + $1.files.count { scan.settledStatus[$0.manifest.path] == nil } }
            if unsettled > 0 {
                console.note("\(unsettled) file\(unsettled == 1 ? "" : "s") changed moments ago: waiting for \(unsettled == 1 ? "it" : "them") to settle")
                try await Task.sleep(for: .nanoseconds(LibraryScanner.settlingTimeNs + 250_000_000))
                scan = try await scanner.scan()
                assets = scan.assets.filter { asset in asset.files.contains { selection.contains($0.manifest.path) } }
            }
            // Every device's answers, or none of them: one that fails part-way does not count.
            var held: [ContentID: [Peer]] = [:]
            var checked: [Peer] = []
            var concerns: [ContentID: [String]] = [:]
            for peer in peers {
                do throws(SyncError) {
                    console.note("asking \(name(peer)) about \(assets.count) asset\(assets.count == 1 ? "" : "s")\(proof ? ", with proof" : "")")
                    let answers = try await sync.checkHolding(of: assets, on: peer, proof: proof, timeout: timeout)
                    checked.append(peer)
                    for (content, answer) in answers {
                        if case let .heldVerified(_, proven) = answer, proven || !proof {
                            held[content, default: []].append(peer)
                        } else if answer != HoldingAnswer.notHeld {
                            concerns[content, default: []].append("\(name(peer)): \(answer)")
                        }
                    }
                } catch {
                    console.error("\(name(peer)): its answers do not count: \(error)")
                }
            }
            var report = Report(library: library.path, copies: copies, proof: proof, devicesChecked: checked.map(name),
                                removed: [], kept: [], bytesFreed: 0, dryRun: !apply)
            let directory = try LibraryDirectory(path: library.path)
            // Removed in batches: each batch's rows are committed in one transaction before its files go.
            var batch: [(asset: Asset, files: [CheckedFile], holders: [Peer], removal: Removal)] = []
            func removeBatch() async throws {
                let outcomes = try await offload(batch.map { ($0.asset, $0.files, $0.holders) }, from: library, directory: directory, ledger: ledger,
                                                 relinked: &relinked)
                for (item, outcome) in zip(batch, outcomes) {
                    switch outcome {
                    case .removed:
                        report.removed.append(item.removal)
                        report.bytesFreed += item.asset.totalSize
                    case let .kept(reason):
                        report.kept.append(Kept(path: item.asset.primaryPath.string, reason: reason))
                    }
                }
                batch.removeAll()
            }
            for asset in assets.sorted(by: { $0.primaryPath < $1.primaryPath }) {
                let holders = held[asset.contentID] ?? []
                // Any device that reports the content changed, or a proof that fails, keeps it here.
                if let concern = concerns[asset.contentID] {
                    report.kept.append(Kept(path: asset.primaryPath.string, reason: concern.joined(separator: "; ")))
                    continue
                }
                guard holders.count >= copies else {
                    report.kept.append(Kept(path: asset.primaryPath.string, reason: "held verified by \(holders.count) of \(copies) devices needed"))
                    continue
                }
                // What was checked: each file as the scan hashed it (or its cache vouched for it).
                let files = asset.files.compactMap { file in
                    scan.settledStatus[file.manifest.path].flatMap { status in
                        (try? LibraryPath.validate(file.manifest.path)).map { CheckedFile(path: $0, status: status) }
                    }
                }
                guard files.count == asset.files.count else {
                    report.kept.append(Kept(path: asset.primaryPath.string, reason: "changed moments before it was scanned: run offload again later"))
                    continue
                }
                let removal = Removal(path: asset.primaryPath.string, files: asset.files.map(\.manifest.path.string), bytes: asset.totalSize,
                                      holders: holders.map(name))
                guard apply else {
                    report.removed.append(removal)
                    report.bytesFreed += asset.totalSize
                    continue
                }
                batch.append((asset, files, holders, removal))
                if batch.count == Self.batchSize { try await removeBatch() }
            }
            if !batch.isEmpty { try await removeBatch() }
            if checked.count < copies { exit = .peerUnavailable }
            reports.append(report)
        }
        await sync.stop()
        print(reports)
        return exit
    }

    /// The libraries PATHs name, each with what of it was named: a library, or folders and
    /// files in one, placed in the nearest library lfsync has indexed above them (one
    /// library, one index: a folder is never offloaded as a library of its own).
    struct Selection {
        var library: URL
        /// Paths inside the library; empty: all of it.
        var within: [RelativePath]

        func contains(_ path: RelativePath) -> Bool {
            within.isEmpty || within.contains { LibraryLocation(library: library, within: $0).contains(path) }
        }
    }

    static func selections(_ paths: [String], home: StateHome) throws -> [Selection] {
        var selections: [Selection] = []
        for path in paths {
            guard let location = try LibraryLocation.indexed(path, home: home) else {
                throw CommandFailure(
                    message: "'\(path)' is not in a library lfsync knows: push it (or 'lfsync scan' it) first; only what other devices hold can be offloaded",
                    exitCode: .usage)
            }
            let key = location.library.standardizedFileURL
            if let index = selections.firstIndex(where: { $0.library.standardizedFileURL == key }) {
                if selections[index].within.isEmpty { continue }
                if let within = location.within { selections[index].within.append(within) } else { selections[index].within = [] }
            } else {
                selections.append(Selection(library: location.library, within: location.within.map { [$0] } ?? []))
            }
        }
        return selections
    }

    private enum Outcome { case removed, kept(String) }

    /// Assets removed per transaction of offloaded rows.
    static let batchSize = 256

    /// A batch of assets: those whose files are all still the files that were checked are
    /// recorded as offloaded (one commit), then their files are removed one by one, each
    /// only if it is still the file that was checked — inode, size, modification and change
    /// time, on its open descriptor (`LibraryDirectory.remove`), so an edit that put the
    /// modification time back is seen. The rows of files that stayed are taken back.
    private func offload(_ batch: [(asset: Asset, files: [CheckedFile], holders: [Peer])], from library: URL, directory: LibraryDirectory,
                         ledger: SyncStateStore, relinked: inout [FileKey: FileStatus]) async throws -> [Outcome] {
        let known = relinked
        let adjusted = { (file: CheckedFile) in
            known[FileKey(file)].map { file.afterUnlinkOfAnotherName($0) } ?? file
        }
        var outcomes: [Outcome] = []
        var eligible: [Int] = []
        var rows: [OffloadedFile] = []
        let now = Date(), root = OffloadedFile.libraryKey(library)
        for (index, (asset, files, holders)) in batch.enumerated() {
            outcomes.append(.removed)
            // Before anything is recorded or removed: every file still is the one checked.
            if let (file, change) = files.lazy.compactMap({ file in Self.change(of: adjusted(file), in: directory).map { (file, $0) } }).first {
                outcomes[index] = .kept("\(file.path) changed since it was checked (\(change))")
                continue
            }
            eligible.append(index)
            rows += asset.files.map { file in
                OffloadedFile(library: root, path: file.manifest.path, content: asset.contentID, size: file.manifest.size,
                              holders: holders.map(\.deviceID.description), at: now, manifest: file.manifest)
            }
        }
        let recorded = rows
        try await ledger.write { store throws(SQLiteError) in try store.recordOffloaded(recorded) }
        var stayed: [RelativePath] = []
        for index in eligible {
            var stayedHere: [String] = []
            for checked in batch[index].files {
                let file = relinked[FileKey(checked)].map { checked.afterUnlinkOfAnotherName($0) } ?? checked
                let why: String?
                do {
                    switch try directory.remove(file) {
                    case let .removed(stillLinked):
                        why = nil
                        if let stillLinked { relinked[FileKey(checked)] = stillLinked }
                    case let .left(change):
                        why = "\(change)"
                    }
                } catch {
                    why = "\(error)"
                }
                if let why {
                    stayedHere.append("\(file.path) (\(why))")
                    stayed.append(file.path.relativePath)
                }
            }
            if !stayedHere.isEmpty {
                outcomes[index] = .kept("\(stayedHere.joined(separator: ", ")) changed while being offloaded, and stayed; the rest of the asset was removed")
            }
        }
        if !stayed.isEmpty {
            let leftInPlace = stayed
            try await ledger.write { store throws(SQLiteError) in try store.forgetOffloaded(inLibrary: root, paths: leftInPlace) }
        }
        return outcomes
    }

    /// An inode, by device and number.
    struct FileKey: Hashable {
        var device: UInt64?
        var inode: UInt64

        init(_ file: CheckedFile) { (device, inode) = (file.device, file.inode) }
    }

    /// How `file` changed since it was checked; nil when it is still that file.
    private static func change(of file: CheckedFile, in directory: LibraryDirectory) -> FileChange? {
        switch Result(catching: { try directory.openChecked(file) }) {
        case .success(.unchanged): nil
        case let .success(.changed(change)): change
        case .failure: .replaced
        }
    }

    private func print(_ reports: [Report]) {
        if arguments[LFSyncCommands.json] {
            console.result((try? JSONOutput.render(reports)) ?? "[]")
            return
        }
        for report in reports {
            let verb = report.dryRun ? "would remove" : "removed"
            for removal in report.removed {
                console.result("\(verb) \(PrintablePath.escape(removal.path)) (\(ByteCountText.format(removal.bytes))), held by \(removal.holders.joined(separator: ", "))")
            }
            if console.verbosity == .verbose {
                for kept in report.kept { console.result("kept \(PrintablePath.escape(kept.path)): \(kept.reason)") }
            }
            let asked = report.devicesChecked.isEmpty ? "no device answered" : "answers from \(report.devicesChecked.joined(separator: ", "))"
            console.note("\(report.library): \(report.removed.count) asset\(report.removed.count == 1 ? "" : "s") \(report.dryRun ? "to remove" : "removed"), \(ByteCountText.format(report.bytesFreed)) \(report.dryRun ? "would be " : "")freed; \(report.kept.count) kept (\(asked)\(report.proof ? ", with proof" : ", without proof"))")
            if report.dryRun, !report.removed.isEmpty { console.note("nothing was deleted: run again with --yes to remove them") }
        }
    }
}

extension OffloadCommand: LFSyncCommand {
    static let copies = Option<String>("copies", valueName: "N", help: "How many other trusted devices must hold an asset, verified now, before it is deleted here.")
    static let yes = Flag("yes", help: "Delete. Without it, only list what would be deleted and the space it would free.")
    static let noProof = Flag("no-proof", help: "Accept a device's word that it holds an asset, without the proof over its bytes (faster; a copy damaged on its disk may then count).")
    static let timeout = Option<Int>("timeout", valueName: "SECONDS", help: "How long each device may take to answer a check of up to 1,024 assets (default 300); one that takes longer does not count.",
                                     expected: "a number of seconds from 1 to 86400") { Int($0).flatMap { (1...86_400).contains($0) ? $0 : nil } }
    static let peers = Option<String>("peers", valueName: "PEER[,PEER]", help: "Ask only these trusted devices (repeatable; default: every trusted device).", completion: .peer)

    static let spec = CommandSpec(
        name: "offload",
        abstract: "Free space: delete local files that enough other devices verifiably hold",
        discussion: "Asks every trusted device (or those given with --peers) whether it holds each asset of PATH now, and deletes an asset's files here only if at least N of them answered \"held and verified\" in this run. PATH is a library, or a folder or file in one (the nearest library lfsync has indexed above it, as whereis finds it). By default each answer must come with a proof: a keyed hash of the asset's bytes under a fresh random value, which the device can only make by reading them, and which is checked against this device's own bytes. An asset goes whole or not at all (a Live Photo pair, a RAW+JPEG pair and their sidecars together); a device that disconnects or times out during its check does not count, nor does one whose copy changed or is damaged; a device reached under two names counts once, and this device never counts for itself. A file is deleted only if, at that moment, it is still the file that was hashed: same inode, size, modification time and change time, checked on the open file; a file edited since — even with its modification time put back — stays, and is reported. Without --yes, only lists what would be deleted. Each file is recorded as offloaded (whereis and status show it, with the devices that held it) before it is removed; nothing changes on the other devices, and 'lfsync pull --from PEER LIBRARY' brings the files back byte-exact, each at its own path. Holds each library's lock like serve (exit 75 when a serve or pull receives into it). Exit 69 when fewer than N devices could be asked.",
        options: [copies.spec, yes.spec, noProof.spec, peers.spec, timeout.spec, LFSyncCommands.json.spec],
        arguments: [ArgumentSpec(name: "PATH", help: "A library, or a folder or file in one (repeatable).", isRepeating: true, completion: .file)],
        examples: ["lfsync offload ~/Pictures --copies 2", "lfsync offload ~/Pictures/2019 --copies 2 --yes", "lfsync offload ~/Pictures/DCIM/IMG_0001.HEIC --copies 1 --yes"]
    )
}
