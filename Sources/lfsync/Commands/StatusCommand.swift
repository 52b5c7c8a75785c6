import Foundation
import LocalFirstSync
import LFSyncSystem
import LFSyncCrypto
import LFSyncContent
import LFSyncStore
import LFSyncTransport
import LFSyncTCP
import LFSyncDiscovery

/// `lfsync status [--peer PEER] [PATH] [--json]`: what is synced with whom.
struct StatusCommand {
    let arguments: ParsedArguments
    let console: Console
    let home = StateHome()

    struct PeerStatus: Encodable {
        var peer: String
        var deviceID: String
        /// Its offers are accepted without asking (false once it is no longer trusted).
        var autoAccept: Bool
        /// It may pull from this device (false once it is no longer trusted).
        var allowPull: Bool
        var synced: Int
        var syncedBytes: UInt64
        var pending: Int
        var inFlight: Int
        /// In flight in a push that ended before it was confirmed (crashed or killed).
        var interrupted: Int
        var failed: Int
        var failures: [String: String]?
        /// Per asset, by primary path; a list, not an object keyed by path, because two
        /// paths may differ only in Unicode normalisation and JSON readers would merge them.
        var assets: [AssetStatus]?
    }

    struct AssetStatus: Encodable {
        var path: String
        var state: String
    }

    func run() async throws -> ExitCode {
        let identity = try home.identity()
        let config = try DeviceConfig.load(from: home.configURL, ownID: identity.deviceID)
        let ledger = try home.ledger()
        let resolver = PeerResolver(config: config, localDeviceID: identity.deviceID)
        var peers = config.ledgerKeys.map { (name: $0.name, key: $0.key) }
        for key in try await ledger.read({ store throws(SQLiteError) in try store.peers() }) where !peers.contains(where: { $0.key == key }) {
            peers.append(((try? DeviceID(parsing: key.rawValue))?.shortForm ?? key.rawValue, key))
        }
        if let only = try arguments.value(Self.peer) {
            let target = try resolver.resolve(only)
            guard let id = target.deviceID else { throw UsageError(message: "status --peer needs a name or Device ID", hint: nil) }
            peers = [(target.label, PeerKey(rawValue: id.description))]
        }
        var assets: [Asset]?
        var location: LibraryLocation?
        if let path = arguments.positionals.first {
            // A folder of a library is counted as part of that library (its index, its rows),
            // never indexed as a library of its own.
            let located = try LibraryLocation.required(path, home: home)
            location = located
            let index = try await HashUpgradeNotice.upgradedIndex(for: located.library, home: home, ledger: ledger, exclusions: ScanExclusions(), console: console)
            assets = try await LibraryScanner(root: located.library, cache: index.scanCache, chunkIndex: index.chunkIndex).scan().assets
                .filter { asset in asset.files.contains { located.contains($0.manifest.path) } }
        } else if console.verbosity == .verbose {
            console.note("the ledger counts contents, not paths: 'lfsync status PATH -v' lists the assets of a library one per line")
        }
        var statuses: [PeerStatus] = []
        for (name, key) in peers {
            let trusted = (try? DeviceID(parsing: key.rawValue)).flatMap { config.trusted($0) }
            var status = PeerStatus(peer: name, deviceID: key.rawValue, autoAccept: trusted?.autoAccept ?? false, allowPull: trusted?.allowPull ?? false,
                                    synced: 0, syncedBytes: 0, pending: 0, inFlight: 0, interrupted: 0, failed: 0)
            if let assets {
                var perAsset: [AssetStatus] = []
                // Counts are per content (the ledger's unit): copies of one content at several
                // paths count once; the per-asset listing shows every path.
                var counted = Set<ContentID>()
                let contents = assets.map(\.contentID)
                let states = try await ledger.read { store throws(SQLiteError) in try store.states(of: contents, for: key) }
                for asset in assets {
                    let state = states[asset.contentID] ?? .pending
                    perAsset.append(AssetStatus(path: asset.primaryPath.string, state: state.rawValue))
                    guard counted.insert(asset.contentID).inserted else { continue }
                    switch state {
                    case .synced:
                        status.synced += 1
                        status.syncedBytes += asset.totalSize
                    case .pending: status.pending += 1
                    case .inFlight: status.inFlight += 1
                    case .interrupted: status.interrupted += 1
                    case .failed: status.failed += 1
                    }
                }
                if console.verbosity == .verbose { status.assets = perAsset }
            } else {
                let totals = try await ledger.read { store throws(SQLiteError) in try store.totals(for: key) }
                status.synced = totals[.synced]?.count ?? 0
                status.syncedBytes = totals[.synced]?.bytes ?? 0
                status.pending = totals[.pending]?.count ?? 0
                status.inFlight = totals[.inFlight]?.count ?? 0
                status.interrupted = totals[.interrupted]?.count ?? 0
                status.failed = totals[.failed]?.count ?? 0
            }
            if status.failed > 0 {
                let limit = console.verbosity == .verbose ? 1000 : 5
                status.failures = try await ledger.read { store throws(SQLiteError) in
                    var failures: [String: String] = [:]
                    for id in try store.contentIDs(in: .failed, for: key).prefix(limit) {
                        failures[id.hex] = try store.failureReason(of: id, for: key) ?? "unknown"
                    }
                    return failures
                }
            }
            statuses.append(status)
        }
        if arguments[LFSyncCommands.json] {
            console.result(try JSONOutput.render(statuses))
            return .success
        }
        if statuses.isEmpty { console.note("no peers yet: 'lfsync trust DEVICE-ID' adds one") }
        for status in statuses {
            let permissions = DeviceConfig.TrustedPeer.permissions(autoAccept: status.autoAccept, allowPull: status.allowPull)
            console.result("\(status.peer) (\(status.deviceID.prefix(7)); \(permissions)): \(status.synced) synced (\(ByteCountText.format(status.syncedBytes))), \(status.pending) pending, \(status.inFlight) in flight, \(status.interrupted) interrupted, \(status.failed) failed")
            for (id, reason) in (status.failures ?? [:]).sorted(by: { $0.key < $1.key }) {
                console.result("    failed \(id.prefix(12)): \(reason)")
            }
            for asset in status.assets ?? [] {
                console.result("    \(asset.state.padding(toLength: 8, withPad: " ", startingAt: 0)) \(asset.path)")
            }
        }
        try await printOffloaded(in: location.map { OffloadedFile.libraryKey($0.library) }, within: location, ledger: ledger, config: config)
        try await printVersions(in: location.map { OffloadedFile.libraryKey($0.library) }, ledger: ledger)
        return .success
    }
}

extension StatusCommand {
    /// What `lfsync offload` removed here (in the library PATH, or everywhere), with the
    /// devices that held it when it went: one line, and with -v one line per file.
    private func printOffloaded(in library: String?, within location: LibraryLocation?, ledger: SyncStateStore, config: DeviceConfig) async throws {
        let files = try await ledger.read { store throws(SQLiteError) in
            if let library { try store.offloaded(inLibrary: library) } else { try store.allOffloaded() }
        }.filter { location?.contains($0.path) ?? true }
        guard !files.isEmpty else { return }
        let bytes = files.reduce(UInt64(0)) { $0 + $1.size }
        console.result("offloaded here: \(files.count) file\(files.count == 1 ? "" : "s") (\(ByteCountText.format(bytes))); 'lfsync pull' brings them back")
        guard console.verbosity == .verbose else { return }
        for file in files {
            let holders = file.holders.map(config.displayName(ofDeviceID:))
            console.result("    offloaded \(PrintablePath.escape(file.path.string)), held by \(holders.joined(separator: ", "))")
        }
    }
}

extension StatusCommand {
    /// The space the versions areas hold (what syncs replaced or deleted, kept 30 days).
    private func printVersions(in library: String?, ledger: SyncStateStore) async throws {
        let totals = try await ledger.read { store throws(SQLiteError) in try store.keptVersionTotals() }
            .filter { library == nil || $0.library == library }
        for total in totals {
            console.result("versions kept in \(PrintablePath.escape(total.library))/.lfsync/versions: \(total.count) file\(total.count == 1 ? "" : "s") "
                           + "(\(ByteCountText.format(total.bytes))), \(VersionsArea.defaultRetentionDays) days each; 'lfsync versions PATH' lists them")
        }
    }
}

extension StatusCommand: LFSyncCommand {
    static let peer = Option<String>("peer", valueName: "PEER", help: "Only this peer.", completion: .peer)

    static let spec = CommandSpec(
        name: "status",
        abstract: "Show what is synced with which peer",
        discussion: "Per peer: whether its offers are accepted without asking (auto-accept) and whether it may pull, and how many assets are synced, pending, in flight, interrupted (in flight in a push that crashed or was killed: the next push offers them again) or failed, and their bytes. With PATH — a library, or a folder of one (counted as part of that library) — only its assets are counted, and assets never offered count as pending; with PATH and -v, one line per asset (the ledger alone knows contents, not paths). A path in no library lfsync knows is an error (exit 64), never indexed as a new library.",
        options: [peer.spec, LFSyncCommands.json.spec],
        arguments: [ArgumentSpec(name: "PATH", help: "Count only the assets in this library, or folder of one.", isOptional: true, completion: .directory)],
        examples: ["lfsync status", "lfsync status ~/Pictures --peer nas -v"]
    )
}
