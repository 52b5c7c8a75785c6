import Foundation
import LocalFirstSync
import LFSyncTCP

/// `lfsync push PATH... --to PEER[,PEER...] | --all [--batch] [--dry-run]`.
///
/// Exit codes (the cron contract): 0 every target confirmed every asset;
/// 1 some assets failed, or a peer could not take them (no room, a disk
/// error there); 69 a peer was unreachable; 75 the lock is held; 77 a peer
/// declined (its owner said no, or it does not trust this device).
struct PushCommand {
    let arguments: ParsedArguments
    let console: Console
    let home = StateHome()

    struct PeerReport: Encodable {
        var peer: String
        var deviceID: String?
        var state: String
        var assetsStored: Int
        var assetsFailed: Int
        var chunkBytesSent: UInt64
        var failures: [String: String]
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
        guard !arguments.positionals.isEmpty else { throw UsageError(message: "missing argument PATH", hint: "Run 'lfsync push --help' for usage.") }
        let progressMode = try arguments.value(Self.progress) ?? .auto
        let identity = try home.identity()
        let config = try DeviceConfig.load(from: home.configURL)
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

        let urls = try arguments.positionals.map { try DirectoryArgument.existing($0) }
        let exclusions = try ExcludeOptions.exclusions(from: arguments)
        if arguments[Self.dryRun] {
            return try await dryRun(urls, targets: targets, ledger: ledger, exclusions: exclusions)
        }

        let sync = LocalSync(
            identity: identity, store: ledger,
            configuration: .init(deviceName: config.name, trust: config.trustPolicy, sendBudget: try BandwidthOption.budget(from: arguments)),
            transport: TCPTransport())
        var reports: [PeerReport] = []
        var connected: [Peer] = []
        var unreachablePeers: [(key: PeerKey, reason: String)] = []
        var unreachable = false, declined = false, failed = false
        for target in targets {
            do {
                let peer = try await connect(target, sync: sync, config: config, batch: batch)
                if !connected.contains(where: { $0.deviceID == peer.deviceID }) { connected.append(peer) }
            } catch let failure as CommandFailure where failure.exitCode == .declined {
                declined = true
                reports.append(PeerReport(peer: target.label, deviceID: target.deviceID?.description, state: "declined: \(failure.message)", assetsStored: 0, assetsFailed: 0, chunkBytesSent: 0, failures: [:]))
                console.error("\(target.label): \(failure.message)")
            } catch {
                unreachable = true
                reports.append(PeerReport(peer: target.label, deviceID: target.deviceID?.description, state: "unreachable: \(error)", assetsStored: 0, assetsFailed: 0, chunkBytesSent: 0, failures: [:]))
                console.error("\(target.label): unreachable: \(error)")
                if let id = target.deviceID { unreachablePeers.append((PeerKey(rawValue: id.description), "unreachable: \(error)")) }
            }
        }

        // Each PATH is scanned while it is sent: a run of folders is offered as soon as it is hashed.
        var contentCount = 0, totalBytes: UInt64 = 0, skippedCount = 0, excludedCount = 0
        var perPeer: [Peer: PeerReport] = [:]
        let renderer = ProgressRenderer(mode: progressMode, console: console)
        for (path, url) in zip(arguments.positionals, urls) {
            let index = try await HashUpgradeNotice.upgradedIndex(for: url, home: home, ledger: ledger, exclusions: exclusions, console: console)
            let scan: LibraryScan
            let contents: [ContentID]
            if connected.isEmpty {
                // Nobody to send to: the scan still says what the unreachable peers are missing.
                scan = try await LibraryScanner(root: url, cache: index.scanCache, chunkIndex: index.chunkIndex, exclusions: exclusions).scan()
                contents = Array(Set(scan.assets.map(\.contentID)))
            } else {
                let push = try await sync.push(library: url, cache: index.scanCache, chunkIndex: index.chunkIndex, exclusions: exclusions, to: .peers(connected))
                for await update in push.transfer { renderer.show(update) }
                for summary in await push.transfer.waitUntilCompleted() {
                    var report = perPeer[summary.peer] ?? PeerReport(peer: summary.peer.name, deviceID: summary.peer.deviceID.description, state: "completed", assetsStored: 0, assetsFailed: 0, chunkBytesSent: 0, failures: [:])
                    report.assetsStored += summary.assetsStored
                    report.assetsFailed += summary.assetsFailed
                    report.chunkBytesSent += summary.chunkBytesSent
                    for (id, failure) in summary.failures { report.failures[id.hex] = failure.description }
                    switch summary.state {
                    case .completed: break
                    case let .declined(reason):
                        declined = true
                        report.state = "declined: \(reason)"
                    case let .failed(reason):
                        failed = true
                        if report.state == "completed" { report.state = "failed: \(reason)" }
                    default: break
                    }
                    perPeer[summary.peer] = report
                }
                scan = try await push.scan.value.get()
                contents = unreachablePeers.isEmpty ? [] : push.contentIDs
                contentCount += push.contentCount
            }
            if connected.isEmpty { contentCount += contents.count }
            totalBytes += scan.statistics.bytes
            console.detail("\(path): \(scan.statistics.files) files, \(scan.statistics.filesHashed) hashed, \(scan.statistics.filesFromCache) from cache")
            for skipped in scan.skipped { console.detail("skipped \(skipped.path.printable): \(skipped.reason)") }
            for excluded in scan.excluded { console.detail("excluded \(excluded.printable)") }
            skippedCount += scan.skipped.count
            excludedCount += scan.excluded.count
            for (key, reason) in unreachablePeers {
                // What the peer verified before stays synced: not reaching it says nothing against that.
                try? ledger.record(.failed, for: contents, peer: key, reason: reason, unlessSynced: true)
            }
        }
        if excludedCount > 0 { console.detail("\(excludedCount) excluded by the ignore rules") }
        if skippedCount > 0 { console.note("\(skippedCount) file\(skippedCount == 1 ? "" : "s") skipped (-v lists them; 'lfsync scan --json' gives the reasons)") }
        // Peers declined or unreachable at connection time took none of it.
        for index in reports.indices { reports[index].assetsFailed = contentCount }
        await sync.stop()
        reports += perPeer.values.sorted { $0.peer < $1.peer }
        let exit: ExitCode = unreachable ? .peerUnavailable : declined ? .declined : failed ? .partial : .success

        if arguments[LFSyncCommands.json] {
            console.result(try JSONOutput.render(Report(assets: contentCount, bytes: totalBytes, peers: reports, exitCode: exit.rawValue)))
        } else if !(batch && exit == .success) {
            for report in reports {
                let line = "\(report.peer): \(report.state) — \(report.assetsStored) of \(contentCount) assets confirmed, \(ByteCountText.format(report.chunkBytesSent)) sent"
                if report.state == "completed" { console.note(line) } else { console.error(line) }
                for (id, reason) in report.failures.sorted(by: { $0.key < $1.key }).prefix(console.verbosity == .verbose ? .max : 5) {
                    console.error("  \(id.prefix(12)): \(reason)")
                }
            }
        }
        return exit
    }

    /// `--dry-run`: scans every PATH and says, per target, what a push would offer.
    private func dryRun(_ urls: [URL], targets: [PeerResolver.Target], ledger: SyncStateStore, exclusions: ScanExclusions) async throws -> ExitCode {
        var assets: [Asset] = []
        for url in urls {
            let index = try await HashUpgradeNotice.upgradedIndex(for: url, home: home, ledger: ledger, exclusions: exclusions, console: console)
            assets += try await LibraryScanner(root: url, cache: index.scanCache, chunkIndex: index.chunkIndex, exclusions: exclusions).scan().assets
        }
        let contents = Array(Set(assets.map(\.contentID)))
        let totalBytes = assets.reduce(UInt64(0)) { $0 + $1.totalSize }
        for target in targets {
            let notSynced = target.deviceID.map { id in
                (try? ledger.contentIDs(notSyncedWith: PeerKey(rawValue: id.description), from: contents).count) ?? contents.count
            } ?? contents.count
            console.result("\(target.label): would offer \(contents.count) assets (\(ByteCountText.format(totalBytes))); \(notSynced) not yet synced with it")
        }
        return .success
    }

    /// Connects to one target. A HOST:PORT target whose device is not trusted needs a
    /// yes on the terminal; in batch mode it is refused.
    private func connect(_ target: PeerResolver.Target, sync: LocalSync, config: DeviceConfig, batch: Bool) async throws -> Peer {
        var address = target.address
        if address == nil, let id = target.deviceID {
            address = await PeerResolver.discover(id, timeout: .seconds(5), localDeviceID: sync.identity.deviceID)
        }
        guard let address else {
            throw CommandFailure(message: "no address known and not found on the local network (give one with 'lfsync trust ... --address HOST:PORT')", exitCode: .peerUnavailable)
        }
        let peer: Peer
        do { peer = try await sync.connect(to: address, expecting: target.deviceID) } catch {
            if case let .declined(reason) = error { throw CommandFailure(message: reason, exitCode: .declined) }
            throw error
        }
        if target.deviceID == nil, config.trusted(peer.deviceID) == nil {
            let confirmed = !batch && Prompter.isInteractive && Self.confirm("\(address) is \"\(peer.name)\", Device ID \(peer.deviceID) — not a trusted device. Compare the ID with 'lfsync id' on that device. Send to it?")
            guard confirmed else {
                await sync.disconnect(peer)
                throw CommandFailure(message: "\(address) is \(peer.deviceID), which is not trusted ('lfsync trust \(peer.deviceID)' first)", exitCode: .declined)
            }
        }
        return peer
    }

    private static func confirm(_ question: String) -> Bool {
        Console.writeError("\(question) [y/N] ")
        return ["y", "yes"].contains(readLine()?.trimmingCharacters(in: .whitespaces).lowercased() ?? "")
    }
}

extension PushCommand: LFSyncCommand {
    static let to = Option<String>("to", valueName: "PEER[,PEER...]", help: "Target peers: names, Device IDs (or unique prefixes) or HOST:PORT.", completion: .peer)
    static let all = Flag("all", help: "Send to every trusted peer.")
    static let batch = Flag("batch", help: "Unattended: never prompt, lock, quiet on success, strict exit codes.")
    static let dryRun = Flag("dry-run", help: "Scan and show what would be offered; send nothing.")
    static let progress = Option<ProgressRenderer.Mode>("progress", valueName: "MODE", help: "Progress on stderr: auto (a terminal only), plain, json or none.")
    static let bandwidthLimit = BandwidthOption.limit

    static let spec = CommandSpec(
        name: "push",
        abstract: "Send what peers lack: scan, offer, send only missing chunks",
        discussion: "Scans each PATH, connects to the target peers, offers the assets and sends each peer only the chunks it does not have, with one progress line per peer on a terminal. With --batch it never prompts, takes a lock, prints nothing on success and exits 0 only when every peer confirmed every asset (1 some failed, 69 a peer was unreachable, 75 another run holds the lock, 77 declined).",
        options: [
            to.spec,
            all.spec,
            batch.spec,
            dryRun.spec,
            progress.spec,
            bandwidthLimit.spec,
            LFSyncCommands.json.spec,
        ] + ExcludeOptions.specs,
        arguments: [ArgumentSpec(name: "PATH", help: "Folders to send.", isRepeating: true, completion: .directory)],
        examples: ["lfsync push ~/Pictures --to nas", "lfsync push ~/Pictures --all --batch"]
    )
}
