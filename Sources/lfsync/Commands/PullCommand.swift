import Foundation
import LocalFirstSync
import LFSyncSystem
import LFSyncCrypto
import LFSyncContent
import LFSyncStore
import LFSyncLanding
import LFSyncTransport
import LFSyncDiscovery
import LFSyncTCP

/// `lfsync pull --from PEER PATH`: ask a peer that allows us to pull
/// (`lfsync trust … --allow-pull` there) to offer what we lack, and receive it.
struct PullCommand {
    let arguments: ParsedArguments
    let console: Console
    let home = StateHome()

    func run() async throws -> ExitCode {
        guard let from = try arguments.value(Self.from), let libraryPath = try LibraryArgument.path(arguments, legacy: Self.library, console: console) else {
            throw UsageError(message: "pull needs --from PEER and the library to receive into: lfsync pull --from PEER PATH", hint: "Run 'lfsync pull --help' for usage.")
        }
        let library = try DirectoryArgument.existing(libraryPath)
        let exclusions = try ExcludeOptions.exclusions(from: arguments)
        let excludeLines = try ExcludeOptions.patternLines(from: arguments, library: library)
        let identity = try home.identity()
        let config = try DeviceConfig.load(from: home.configURL, ownID: identity.deviceID)
        let lock = arguments[Self.batch] ? try ProcessLock(at: home.lockURL) : nil
        defer { withExtendedLifetime(lock) {} }
        let target = try PeerResolver(config: config, localDeviceID: identity.deviceID).resolve(from)
        guard let id = target.deviceID, target.trusted != nil else {
            throw UsageError(message: "pull needs a trusted peer ('\(from)' is not one)", hint: "'lfsync trust DEVICE-ID --address HOST:PORT' first.")
        }
        // Like serve, pull receives into the library: never two receivers in one library.
        let libraryLock = try LibraryLock.forReceiving(into: library)
        defer { withExtendedLifetime(libraryLock) {} }
        let ledger = try home.ledger()
        let index = try await HashUpgradeNotice.upgradedIndex(for: library, home: home, ledger: ledger, exclusions: exclusions, console: console)
        let before = try await LibraryScanner(root: library, cache: index.scanCache, chunkIndex: index.chunkIndex, exclusions: exclusions).scan()
        // What `offload` removed from this library: the peer's ledger says we hold it, so a
        // plain pull would not bring it; each file is rebuilt at its own path.
        let offloaded = try await RestoreOffloaded.stillMissing(in: library, files: Self.files(of: before.assets), assets: before.assets, ledger: ledger)
        let dryRun = arguments[Self.dryRun]
        // We asked for this data, so this process accepts the peer's answer without a question
        // (with --dry-run it looks at each answer and declines it).
        var trust = config.trustPolicy
        trust.entries[id] = .init(deviceID: id, acceptsConnections: true, acceptsOffers: !dryRun)
        let sync = LocalSync(
            identity: identity, store: ledger,
            configuration: .init(deviceName: config.name, library: library, libraryChunkIndex: index.chunkIndex,
                                 libraryScanCache: index.scanCache, trust: trust,
                                 receiveBudget: try BandwidthOption.budget(from: arguments)),
            transport: TCPTransport())
        var address = target.address
        if address == nil { address = await PeerResolver.discover(id, timeout: .seconds(5), localDeviceID: identity.deviceID) }
        guard let address else { throw CommandFailure(message: "\(target.label): no address known and not found on the local network", exitCode: .peerUnavailable) }
        let peer: Peer
        do { peer = try await sync.connect(to: address, expecting: id) } catch {
            if case let .declined(reason) = error { throw CommandFailure(message: "\(target.label): \(reason)", exitCode: .declined) }
            throw CommandFailure(message: "\(target.label): unreachable: \(error)", exitCode: .peerUnavailable)
        }
        let offers = sync.incomingTransfers()
        // Offloaded files first, each rebuilt at its recorded path; rows from before manifests
        // were recorded are fetched by content ID with the pull.
        var restore = RestoreOffloaded.Outcome()
        if !dryRun, offloaded.contains(where: { $0.manifest != nil }) {
            console.note("bringing back \(offloaded.count) offloaded file\(offloaded.count == 1 ? "" : "s") from \(target.label)")
            restore = await RestoreOffloaded.restore(offloaded, into: library, index: index, sync: sync, peer: peer)
        }
        try await sync.pull(from: peer, excluding: excludeLines)
        var expected = 1
        // What the peer holds (by this device's ledger: it confirmed each) and the library lacks
        // now — deleted by hand, or a new empty folder — is asked for by content: the peer's own
        // ledger says this device has it, so its answer to the Pull would leave it out. The
        // Pull's exclude rules apply to these too.
        let here = Set(before.assets.map(\.contentID)).union(offloaded.map(\.content))
        let key = PeerKey(rawValue: id.description)
        let held = (try? await ledger.read { store throws(SQLiteError) in try store.contentIDs(in: .synced, for: key) }) ?? []
        let lacking = held.filter { !here.contains($0) }
        let legacy = offloaded.filter { $0.manifest == nil }
        let wanted = Array(Set(lacking).union(legacy.map(\.content)))
        if !wanted.isEmpty {
            do throws(SyncError) {
                expected += try await sync.fetch(wanted, from: peer)
                if !lacking.isEmpty, !dryRun {
                    console.note("asking \(peer.name) for \(lacking.count) asset\(lacking.count == 1 ? "" : "s") it holds that this library lacks now")
                }
            } catch {
                console.error("\(peer.name): cannot ask for what this library lacks: \(error)")
            }
        }
        let answers = expected
        // The peer answers each request with one offer (empty when we lack nothing), or drops us if it does not trust us.
        let end: PullEnd = await withTaskGroup(of: PullEnd?.self) { group in
            group.addTask {
                var received: [ContentID: ReceiveSessionHandle.Outcome] = [:], count = 0
                var offered = (files: UInt64(0), bytes: UInt64(0))
                for await offer in offers where offer.from.deviceID == id {
                    if dryRun {
                        // Only looked at: what the answer would bring.
                        offered.files += offer.fileCount
                        offered.bytes += offer.totalByteCount
                        offer.decline()
                    } else {
                        // The pull's answers are accepted at once.
                        do throws(IncomingTransferError) { received.merge(try await offer.accept().files()) { _, new in new } } catch {
                            return .notAccepted(error)
                        }
                    }
                    count += 1
                    if count == answers { return dryRun ? .offered(files: offered.files, bytes: offered.bytes) : .received(received) }
                }
                return nil
            }
            group.addTask {
                // The peer drops us when it refuses: the pull ends then. An answer that came just
                // before the connection closed is still being handed over: it is given a moment.
                _ = await sync.disconnection(of: peer)
                if !Task.isCancelled { try? await Task.sleep(for: .milliseconds(500)) }
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? .dropped
        }
        await sync.stop()
        let outcome: [ContentID: ReceiveSessionHandle.Outcome]
        switch end {
        case let .received(outcomes):
            outcome = outcomes
        case let .offered(files, bytes):
            let report = PullReport(from: target.label, dryRun: true, assetsReceived: 0, assetsFailed: 0, failures: [:],
                                    offloadedBack: 0, offloadedLeft: offloaded.count, lackingAskedFor: lacking.count,
                                    wouldReceiveFiles: files, wouldReceiveBytes: bytes)
            if arguments[LFSyncCommands.json] {
                console.result(try JSONOutput.render(report))
            } else {
                console.result("from \(target.label): would receive \(files) file\(files == 1 ? "" : "s") (\(ByteCountText.format(bytes)))"
                               + (offloaded.isEmpty ? "" : ", and bring back \(offloaded.count) offloaded file\(offloaded.count == 1 ? "" : "s")"))
                console.note("nothing was received (--dry-run)")
            }
            return .success
        case let .notAccepted(error):
            throw CommandFailure(message: "\(peer) answered the pull, but its offer could not be accepted: \(error)", exitCode: .software)
        case .dropped:
            throw CommandFailure(
                message: """
                    \(peer) refused the pull: only devices it trusts with --allow-pull may pull. \
                    On \(peer.name), run 'lfsync trust \(identity.deviceID) --allow-pull' \
                    (and --auto-accept too if it should keep accepting this device's pushes unasked).
                    """,
                exitCode: .declined)
        }
        var stillOffloaded = 0
        if !offloaded.isEmpty {
            // A record goes only when its path holds its file again, by hash.
            let after = try await LibraryScanner(root: library, cache: index.scanCache, chunkIndex: index.chunkIndex, exclusions: exclusions).scan()
            let back = try await RestoreOffloaded.forgetReturned(offloaded, in: library, files: Self.files(of: after.assets), assets: after.assets, ledger: ledger)
            stillOffloaded = offloaded.count - back
            console.note("\(back) of \(offloaded.count) offloaded file\(offloaded.count == 1 ? "" : "s") back")
            for failure in restore.failed { console.error("  not back: \(PrintablePath.escape(failure.path.string)): \(failure.reason)") }
        }
        let failed = outcome.filter { if case .failed = $0.value { true } else { false } }
        let exit: ExitCode = failed.isEmpty && stillOffloaded == 0 ? .success : .partial
        if arguments[LFSyncCommands.json] {
            var failures: [String: String] = [:]
            for (id, result) in failed { if case let .failed(reason) = result { failures[id.hex] = reason } }
            for failure in restore.failed { failures[failure.path.string] = failure.reason }
            console.result(try JSONOutput.render(PullReport(
                from: target.label, dryRun: false, assetsReceived: outcome.count - failed.count, assetsFailed: failed.count, failures: failures,
                offloadedBack: offloaded.count - stillOffloaded, offloadedLeft: stillOffloaded, lackingAskedFor: lacking.count,
                wouldReceiveFiles: nil, wouldReceiveBytes: nil)))
            return exit
        }
        console.note("from \(peer): \(outcome.count - failed.count) assets received, \(failed.count) failed")
        for (id, result) in failed.prefix(5) {
            if case let .failed(reason) = result { console.error("  \(id.hash.shortHex): \(reason)") }
        }
        return exit
    }
}

extension PullCommand {
    /// What `pull --json` prints.
    struct PullReport: Encodable {
        var from: String
        var dryRun: Bool
        var assetsReceived: Int
        var assetsFailed: Int
        /// By content ID (assets) or path (offloaded files that did not come back).
        var failures: [String: String]
        var offloadedBack: Int
        var offloadedLeft: Int
        /// Assets the peer holds that the library lacked (asked for by content).
        var lackingAskedFor: Int
        var wouldReceiveFiles: UInt64?
        var wouldReceiveBytes: UInt64?
    }

    /// Every scanned file's manifest, by path.
    static func files(of assets: [Asset]) -> [RelativePath: FileManifest] {
        var files: [RelativePath: FileManifest] = [:]
        for asset in assets { for file in asset.files { files[file.manifest.path] = file.manifest } }
        return files
    }
}

/// How a pull ended: the peer's offer received, an offer that could not be
/// accepted (its consent had already expired), or the peer hung up on us,
/// which is how it refuses a device it does not trust with pulls.
private enum PullEnd: Sendable {
    case received([ContentID: ReceiveSessionHandle.Outcome])
    /// With --dry-run: what the answers offered, declined.
    case offered(files: UInt64, bytes: UInt64)
    case notAccepted(IncomingTransferError)
    case dropped
}

extension PullCommand: LFSyncCommand {
    static let from = Option<String>("from", valueName: "PEER", help: "The peer to pull from (it must trust this device with --allow-pull).", completion: .peer)
    static let library = Option<String>("library", valueName: "DIR", help: "Deprecated spelling of PATH.", completion: .directory)
    static let batch = Flag("batch", help: "Unattended: never prompt, lock, quiet on success.")
    static let dryRun = Flag("dry-run", help: "Ask, and say what would be received and brought back; receive nothing.")
    static let bandwidthLimit = BandwidthOption.receiveLimit

    static let spec = CommandSpec(
        name: "pull",
        abstract: "Receive what a trusted peer has that this device lacks",
        discussion: "Connects to PEER and asks it to offer everything it serves that this device lacks, and brings back the files 'lfsync offload' removed from PATH: each is rebuilt at its own path from the chunks PEER holds (at whatever path it keeps them) and the library's own, checked against the hashes recorded when it was offloaded, and placed only where nothing has that name now; its record goes once that path holds that file again. PEER answers only when it trusts this device with --allow-pull (exit 77 otherwise). Exit 1 when an asset or an offloaded file could not be brought back. Holds the library's lock like serve: exits 75 when a serve or another pull is receiving into PATH. The peer applies its own ignore rules and then this side's (the defaults, PATH's .lfsyncignore, --exclude-from, --exclude), so excluded files never cross the link. --bwlimit here limits what this side receives.",
        options: [
            from.spec,
            batch.spec,
            dryRun.spec,
            bandwidthLimit.spec,
            LFSyncCommands.json.spec,
        ] + ExcludeOptions.specs + [library.spec],
        arguments: [LibraryArgument.argument("The library to receive into.")],
        examples: ["lfsync pull --from nas ~/Pictures"]
    )
}
