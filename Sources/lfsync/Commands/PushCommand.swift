import Foundation
import LocalFirstSync
import LFSyncSystem
import LFSyncCrypto
import LFSyncContent
import LFSyncStore
import LFSyncTransport
import LFSyncDiscovery
import LFSyncTCP

/// `lfsync push PATH... --to PEER[,PEER...] | --all [--batch] [--dry-run]`. A PATH inside a
/// library lfsync knows sends that folder as part of the library, at its place under it.
///
/// Exit codes (the cron contract): 0 every target confirmed every asset;
/// 1 some assets failed, or a peer could not take them (no room, a disk
/// error there); 69 a peer was unreachable; 75 the lock is held; 77 a peer
/// declined (its owner said no, or it does not trust this device).
struct PushCommand {
    let arguments: ParsedArguments
    let home = StateHome()
    /// With `--progress json`, stderr carries JSON lines only: notes and errors too.
    let console: Console

    init(arguments: ParsedArguments, console: Console) {
        self.arguments = arguments
        var console = console
        console.jsonLines = (try? arguments.value(Self.progress)) == .json
        self.console = console
    }

    struct PeerReport: Encodable {
        var peer: String
        var deviceID: String?
        var state: String
        var assetsStored: Int
        var assetsFailed: Int
        var chunkBytesSent: UInt64
        var failures: [String: String]
        /// What its sync did (a peer that keeps path versions), in words.
        var sync: String?
    }

    struct Report: Encodable {
        var assets: Int
        var bytes: UInt64
        var peers: [PeerReport]
        var exitCode: Int32
    }

    func run() async throws -> ExitCode {
        let batch = arguments[Self.batch]
        let targetsText = try arguments.values(Self.to).flatMap { $0.split(separator: ",").map(String.init) }
        guard !targetsText.isEmpty || arguments[Self.all] else {
            throw UsageError(message: "push needs --to PEER or --all", hint: "Run 'lfsync push --help' for usage.")
        }
        guard targetsText.isEmpty || !arguments[Self.all] else {
            throw UsageError(message: "--to and --all both name the targets: give one of them", hint: "--all sends to every trusted device.")
        }
        guard !arguments.positionals.isEmpty else { throw UsageError(message: "missing argument PATH", hint: "Run 'lfsync push --help' for usage.") }
        let progressMode = try arguments.value(Self.progress) ?? .auto
        let identity = try home.identity()
        let config = try DeviceConfig.load(from: home.configURL, ownID: identity.deviceID)
        let lock = batch ? try ProcessLock(at: home.lockURL) : nil
        defer { withExtendedLifetime(lock) {} }
        let ledger = try home.ledger()

        let resolver = PeerResolver(config: config, localDeviceID: identity.deviceID)
        var targets = try targetsText.map { try resolver.resolve($0) }
        if arguments[Self.all] {
            targets += try config.peers.map { try resolver.resolve($0.name) }
        }
        // Each device once, however often it was named (`--to nas,nas`, or a name and its Device ID).
        var seenTargets = Set<String>()
        targets = targets.filter { seenTargets.insert($0.deviceID?.description ?? $0.address?.description ?? $0.label).inserted }
        guard !targets.isEmpty else { throw CommandFailure(message: "no trusted peers to send to ('lfsync trust' adds one)", exitCode: .usage) }

        let selections = try arguments.positionals.map { try PushSelection.resolve($0, home: home) }
        for selection in selections where selection.within != nil {
            console.note("\(selection.path) is in the library \(selection.library.path): its files go to the same places under the peers' libraries")
        }
        let exclusions = try ExcludeOptions.exclusions(from: arguments)
        if arguments[Self.dryRun] {
            return try await dryRun(selections, targets: targets, ledger: ledger, exclusions: exclusions)
        }

        let sync = LocalSync(
            identity: identity, store: ledger,
            configuration: .init(deviceName: config.name, trust: config.trustPolicy, sendBudget: try BandwidthOption.budget(from: arguments)),
            transport: TCPTransport())
        // Every target is a destination of the push, connected or not: the engine counts and
        // records what a device that is not connected did not take, by the same rules as the
        // rest (the CLI writes no ledger row of its own). Why it is not connected is ours.
        var destinations: [Peer] = []
        var notConnected: [DeviceID: TargetFailure] = [:]
        var unidentified: [(label: String, failure: TargetFailure)] = []
        for target in targets {
            do {
                let peer = try await PeerConnector.connect(target, sync: sync, config: config, batch: batch)
                if !destinations.contains(where: { $0.deviceID == peer.deviceID }) { destinations.append(peer) }
            } catch {
                let failure: TargetFailure = (error as? CommandFailure).map { $0.exitCode == .declined ? .declined($0.message) : .unreachable($0.message) }
                    ?? .unreachable("\(error)")
                console.error("\(target.label): \(failure.text)")
                if let id = target.deviceID {
                    notConnected[id] = failure
                    if !destinations.contains(where: { $0.deviceID == id }) { destinations.append(Peer(deviceID: id, name: target.label)) }
                } else {
                    unidentified.append((target.label, failure))
                }
            }
        }

        // Ctrl-C or SIGTERM stops the push in flight cleanly (what was confirmed stays confirmed,
        // the rest pending) and says so; a second Ctrl-C ends the process at once.
        let running = LockedState<OutgoingTransfer?>(nil)
        let stopped = LockedState<Int32?>(nil)
        let interruption = Task {
            let signalNumber = await SignalWaiter.wait()
            signal(SIGINT, SIG_DFL)
            stopped.withLock { $0 = signalNumber }
            console.error("\(signalNumber == SIGINT ? "interrupted (Ctrl-C)" : "terminated"): stopping the push; what each peer confirmed stays confirmed (Ctrl-C again to quit at once)")
            try? await running.withLock({ $0 })?.cancel()
        }
        defer { interruption.cancel() }

        // Each PATH is scanned while it is sent: a run of folders is offered as soon as it is hashed.
        var contentCount = 0, totalBytes: UInt64 = 0, skippedCount = 0, excludedCount = 0, unreadable = 0
        var perPeer: [Peer: PeerReport] = [:]
        var outcomes: [Peer: PeerOutcome] = [:]
        var failedPaths: [String: String] = [:]
        let renderer = ProgressRenderer(mode: progressMode, console: console)
        for selection in selections where stopped.withLock({ $0 }) == nil {
            let (path, url) = (selection.path, selection.library)
            let index = try await HashUpgradeNotice.upgradedIndex(for: url, home: home, ledger: ledger, exclusions: exclusions, console: console)
            // A whole library is synced after it is pushed; a folder of one is copied (its
            // history is the library's, which a folder's push does not cover).
            let syncing = selection.within == nil
            let push = try await sync.push(library: url, cache: index.scanCache, chunkIndex: index.chunkIndex, exclusions: exclusions,
                                           within: selection.within, to: .peers(destinations), syncFollows: syncing)
            running.withLock { $0 = push.transfer }
            // Stopped between the check above and now: this push stops too.
            if stopped.withLock({ $0 }) != nil { try? await push.transfer.cancel() }
            // The library's changes are recorded as soon as its scan is complete, while the
            // peers still confirm the offers (a repeat push waits mostly for that): the sync
            // after the push needs the record, the transfer does not.
            let pushSync = PushSync(library: url, index: index, ledger: ledger, sync: sync, device: DeviceShortID.of(identity.deviceID))
            let recording: Task<Result<HistoryRecorder.Outcome, any Error>, Never>? = syncing ? Task {
                do { return .success(try await pushSync.record(try await push.scanned(), settledOnly: false)) } catch { return .failure(error) }
            } : nil
            for await update in push.transfer { renderer.show(update) }
            for summary in await push.transfer.waitUntilCompleted() {
                var report = perPeer[summary.peer] ?? PeerReport(peer: summary.peer.name, deviceID: summary.peer.deviceID.description, state: "", assetsStored: 0, assetsFailed: 0, chunkBytesSent: 0, failures: [:])
                report.assetsStored += summary.assetsStored
                report.assetsFailed += summary.assetsFailed
                report.chunkBytesSent += summary.chunkBytesSent
                for (id, failure) in summary.failures { report.failures[id.hex] = failure.description }
                perPeer[summary.peer] = report
                let outcome: PeerOutcome = switch (notConnected[summary.peer.deviceID], summary.state) {
                case let (failure?, _): .notConnected(failure)
                case (nil, .completed): .completed
                case let (nil, .declined(reason)): .declined(reason)
                case let (nil, .failed(reason)): .failed(reason)
                case (nil, _): .failed("\(summary.state)")
                }
                outcomes[summary.peer] = PeerOutcome.worse(outcomes[summary.peer], outcome)
            }
            let scan = try await push.scanned()
            // A failed asset is named by its path: a content ID means nothing to the person reading.
            let failed = Set(perPeer.values.flatMap(\.failures.keys))
            for asset in scan.assets where failed.contains(asset.contentID.hex) {
                if let first = asset.files.first { failedPaths[asset.contentID.hex] = "\(url.path)/\(first.manifest.path)" }
            }
            if syncing, stopped.withLock({ $0 }) == nil {
                let connected = destinations.filter { notConnected[$0.deviceID] == nil && outcomes[$0]?.isFailed != true && outcomes[$0]?.isDeclined != true }
                var looksUnmounted = false
                switch await recording?.value {
                case let .success(outcome)?: looksUnmounted = outcome.looksUnmounted
                case let .failure(error)?: console.error("\(path): could not record its changes: \(error)")
                case nil: break
                }
                let results = await pushSync.requestSyncs(with: connected, deletions: arguments[Self.delete], maxDeletions: try arguments.value(Self.maxDelete),
                                                          manifests: PushSync.manifests(of: scan))
                if looksUnmounted {
                    console.error("\(path) looks unmounted or emptied (its .lfsync/library-id marker is missing, or no file is left): its missing files were not recorded as deleted")
                }
                for result in results {
                    let line = PushSync.summary(result)
                    perPeer[result.peer, default: PeerReport(peer: result.peer.name, deviceID: result.peer.deviceID.description, state: "", assetsStored: 0,
                                                             assetsFailed: 0, chunkBytesSent: 0, failures: [:])].sync = line
                    switch result.reply?.status {
                    // Declined: it does not take this device's pushes unasked, and the push was a copy.
                    case .synced?, .declined?: break
                    default: outcomes[result.peer] = PeerOutcome.worse(outcomes[result.peer], .failed(line))
                    }
                }
            }
            contentCount += push.contentCount
            totalBytes += scan.statistics.bytes
            console.detail("\(path): \(scan.statistics.files) files, \(scan.statistics.filesHashed) hashed, \(scan.statistics.filesFromCache) from cache")
            for skipped in scan.skipped { console.detail("skipped \(skipped.path.printable): \(skipped.reason)") }
            for excluded in scan.excluded { console.detail("excluded \(excluded.printable)") }
            skippedCount += scan.skipped.count
            excludedCount += scan.excluded.count
            unreadable += scan.skipped.filter { !SkipReport.isDeliberate($0) }.count
            // A skip is news once: the same list every night would only teach cron's mail to be ignored.
            let news = SkipReport(home: home, library: url).newSinceLastReport(scan.skipped)
            if !news.isEmpty {
                console.note("\(news.count) file\(news.count == 1 ? "" : "s") newly skipped in \(path): "
                             + news.prefix(3).map { "\($0.path.printable) (\($0.reason))" }.joined(separator: ", ") + (news.count > 3 ? ", …" : "")
                             + "; reported once, -v lists them every time")
            }
        }
        if excludedCount > 0 { console.detail("\(excludedCount) excluded by the ignore rules") }
        if skippedCount > 0 { console.detail("\(skippedCount) file\(skippedCount == 1 ? "" : "s") skipped ('lfsync scan --json' gives the reasons)") }
        await sync.stop()
        // A target known only by its address that could not be reached has no Device ID, and
        // so no ledger rows: it took none of the push.
        var reports = unidentified.map { PeerReport(peer: $0.label, deviceID: nil, state: $0.failure.text, assetsStored: 0,
                                                   assetsFailed: contentCount, chunkBytesSent: 0, failures: [:]) }
        for (peer, var report) in perPeer.sorted(by: { $0.value.peer < $1.value.peer }) {
            report.state = outcomes[peer]?.text ?? "completed"
            reports.append(report)
        }
        let all = Array(outcomes.values) + unidentified.map { .notConnected($0.failure) }
        var exit: ExitCode = all.contains(where: \.isUnreachable) ? .peerUnavailable : all.contains(where: \.isDeclined) ? .declined
            : all.contains(where: \.isFailed) ? .partial : .success
        // A file that could not be read was not sent: not everything is on the peers (rsync's 23).
        if unreadable > 0, exit == .success { exit = .partial }
        if let signalNumber = stopped.withLock({ $0 }) {
            exit = signalNumber == SIGINT ? .interrupted : .terminated
            console.error("the rest is sent by the next push")
        }

        if arguments[LFSyncCommands.json] {
            console.result(try JSONOutput.render(Report(assets: contentCount, bytes: totalBytes, peers: reports, exitCode: exit.rawValue)))
        } else if !(batch && exit == .success) {
            for (report, peer) in reports.map({ report in (report, perPeer.first { $0.value.peer == report.peer }?.key) }) {
                let line = "\(report.peer): \(report.state) — \(report.assetsStored) of \(contentCount) assets confirmed, \(ByteCountText.format(report.chunkBytesSent)) sent"
                if report.assetsStored == contentCount, report.assetsFailed == 0 { console.note(line) } else { console.error(line) }
                if let synced = report.sync {
                    if synced.hasPrefix("synced:") || synced.hasPrefix("sync declined") { console.note("  \(synced)") } else { console.error("  \(synced)") }
                }
                if let peer, outcomes[peer]?.isDeclined == true {
                    // One reason for every asset: the list would repeat it; what to do instead.
                    console.error("  on \(report.peer), 'lfsync trust \(identity.deviceID) --auto-accept' accepts this device's pushes without asking")
                    continue
                }
                for (id, reason) in report.failures.sorted(by: { $0.key < $1.key }).prefix(console.verbosity == .verbose ? .max : 5) {
                    console.error("  \(failedPaths[id].map { PrintablePath.escape($0) } ?? String(id.prefix(12))): \(reason)")
                }
            }
        }
        return exit
    }

    /// Why a target could not be connected to.
    enum TargetFailure {
        case declined(String)
        case unreachable(String)

        var text: String {
            switch self {
            case let .declined(message): "declined: \(message)"
            case let .unreachable(message): "unreachable: \(message)"
            }
        }
    }

    /// How the push ended for one peer, over every PATH: the worst of them.
    enum PeerOutcome {
        case completed
        case failed(String)
        case declined(String)
        case notConnected(TargetFailure)

        var text: String {
            switch self {
            case .completed: "completed"
            case let .failed(reason): "failed: \(reason)"
            // A bare "declined" from the peer says nothing more: say what it means.
            case let .declined(reason) where reason == "declined": "declined (its owner said no, or it does not accept this device's pushes unasked)"
            case let .declined(reason): "declined: \(reason)"
            case let .notConnected(failure): failure.text
            }
        }

        var isUnreachable: Bool { if case .notConnected(.unreachable) = self { true } else { false } }
        var isDeclined: Bool {
            switch self {
            case .declined, .notConnected(.declined): true
            default: false
            }
        }
        var isFailed: Bool { if case .failed = self { true } else { false } }

        /// The outcome that says more: not connected, then declined, then failed, then completed.
        static func worse(_ old: PeerOutcome?, _ new: PeerOutcome) -> PeerOutcome {
            guard let old else { return new }
            func rank(_ outcome: PeerOutcome) -> Int {
                switch outcome {
                case .completed: 0
                case .failed: 1
                case .declined: 2
                case .notConnected: 3
                }
            }
            return rank(new) > rank(old) ? new : old
        }
    }

    /// What `--dry-run` says, per target (`--json`).
    struct DryRunReport: Encodable {
        struct Target: Encodable {
            var peer: String
            var deviceID: String?
            /// Assets a push would offer it (every asset: a push offers all, the peer takes what it lacks).
            var assets: Int
            /// Those its confirmations do not cover yet: what would travel.
            var notSynced: Int
            var notSyncedBytes: UInt64
            /// With -v: the primary paths of the assets not synced with it.
            var paths: [String]?
        }
        var dryRun = true
        var assets: Int
        var bytes: UInt64
        var targets: [Target]
    }

    /// `--dry-run`: scans every PATH and says, per target, what a push would offer and what of
    /// it is not confirmed there yet (with -v, which files); sends nothing.
    private func dryRun(_ selections: [PushSelection], targets: [PeerResolver.Target], ledger: SyncStateStore, exclusions: ScanExclusions) async throws -> ExitCode {
        var assets: [Asset] = []
        for selection in selections {
            let index = try await HashUpgradeNotice.upgradedIndex(for: selection.library, home: home, ledger: ledger, exclusions: exclusions, console: console)
            assets += try await LibraryScanner(root: selection.library, cache: index.scanCache, chunkIndex: index.chunkIndex, exclusions: exclusions).scan().assets
                .filter(selection.contains)
        }
        let contents = Array(Set(assets.map(\.contentID)))
        let totalBytes = assets.reduce(UInt64(0)) { $0 + $1.totalSize }
        var report = DryRunReport(assets: contents.count, bytes: totalBytes, targets: [])
        for target in targets {
            var missing = Set(contents)
            if let id = target.deviceID, let notSynced = try? await ledger.contentIDs(notSyncedWith: id, from: contents) { missing = Set(notSynced) }
            var seen = Set<ContentID>()
            let travelling = assets.filter { missing.contains($0.contentID) && seen.insert($0.contentID).inserted }
            report.targets.append(.init(
                peer: target.label, deviceID: target.deviceID?.description, assets: contents.count, notSynced: missing.count,
                notSyncedBytes: travelling.reduce(0) { $0 + $1.totalSize },
                paths: console.verbosity == .verbose ? travelling.map(\.primaryPath.string).sorted() : nil))
        }
        if arguments[LFSyncCommands.json] {
            console.result(try JSONOutput.render(report))
            return .success
        }
        for target in report.targets {
            console.result("\(target.peer): would offer \(target.assets) assets (\(ByteCountText.format(totalBytes))); \(target.notSynced) not yet synced with it (\(ByteCountText.format(target.notSyncedBytes)))")
            for path in target.paths ?? [] { console.result("    \(PrintablePath.escape(path))") }
        }
        if console.verbosity != .verbose { console.note("nothing was sent (-v lists the files not yet synced)") }
        return .success
    }
}

/// What one PATH of a push names: a library, or a folder of one (its files keep their
/// places under the library, as `rsync -R` keeps them, never land at the peer's root).
struct PushSelection {
    var library: URL
    var within: RelativePath?
    /// As the user typed it, for messages.
    var path: String

    func contains(_ asset: Asset) -> Bool {
        guard let within else { return true }
        let location = LibraryLocation(library: library, within: within)
        return asset.files.contains { location.contains($0.manifest.path) }
    }

    /// A folder inside a library lfsync knows is sent as part of that library; any other
    /// folder is a library of its own.
    static func resolve(_ path: String, home: StateHome) throws -> PushSelection {
        let url = try DirectoryArgument.existing(path)
        if let found = try LibraryLocation.indexed(url.path, home: home), found.within != nil {
            return PushSelection(library: found.library, within: found.within, path: path)
        }
        return PushSelection(library: url, within: nil, path: path)
    }
}

extension PushCommand: LFSyncCommand {
    static let to = Option<String>("to", valueName: "PEER[,PEER...]", help: "Target peers: names, Device IDs (or unique prefixes) or HOST:PORT.", completion: .peer)
    static let all = Flag("all", help: "Send to every trusted peer.")
    static let batch = Flag("batch", help: "Unattended: never prompt, lock, quiet on success, strict exit codes.")
    static let dryRun = Flag("dry-run", help: "Scan and show what would be offered; send nothing.")
    static let progress = Option<ProgressRenderer.Mode>("progress", valueName: "MODE", help: "Progress on stderr: auto (a terminal only), plain, json or none.")
    static let bandwidthLimit = BandwidthOption.limit
    static let delete = Flag("delete", help: "Ask each peer to apply this library's deletions (moved into its versions area), as rsync --delete.")
    static let maxDelete = Option<UInt32>("max-delete", valueName: "N", help: "Apply no deletion on a peer that would get more than N of them.",
                                          expected: "a number of deletions from 0 to 4294967294") { UInt32($0).flatMap { $0 < .max ? $0 : nil } }

    static let spec = CommandSpec(
        name: "push",
        abstract: "Send what peers lack: scan, offer, send only missing chunks",
        discussion: "Scans each PATH, connects to the target peers, offers the assets and sends each peer only the chunks it does not have, with one progress line per peer on a terminal. A PATH inside a library lfsync knows (a folder of one that was pushed, served or scanned before) is sent as part of that library: its files land at the same places under the peer's library, as rsync -R keeps them. --dry-run says, per peer, what would be offered and what is not yet synced there (-v lists those files; --json as JSON); --progress json makes stderr JSON lines only. With --batch it never prompts, takes a lock, prints nothing on success and exits 0 only when every peer confirmed every asset (1 some failed, 69 a peer was unreachable, 75 another run holds the lock, 77 declined).",
        options: [
            to.spec,
            all.spec,
            batch.spec,
            dryRun.spec,
            progress.spec,
            bandwidthLimit.spec,
            delete.spec,
            maxDelete.spec,
            LFSyncCommands.json.spec,
        ] + ExcludeOptions.specs,
        arguments: [ArgumentSpec(name: "PATH", help: "Libraries, or folders of one, to send.", isRepeating: true, completion: .directory)],
        examples: ["lfsync push ~/Pictures --to nas", "lfsync push ~/Pictures --all --batch"]
    )
}
