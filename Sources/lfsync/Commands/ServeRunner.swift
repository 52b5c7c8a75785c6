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
import LFSyncWire

/// The receiving side, set up once — for `serve`, and for `sync`, which runs a watch on the
/// same engine: the library indexed and locked, the engine listening (and advertising),
/// pulls, holding checks, path states and syncs answered, trust changes applied, and the
/// questions to a person (a new device, an offer) asked on the terminal when there is one.
struct ServeRunner {
    /// What runs until `stop()`.
    final class Running: Sendable {
        let sync: LocalSync
        let library: URL
        let index: LibraryIndex
        let config: CurrentConfig
        /// Serialises what changes the library's history: a sync applied, a watch's record.
        let gate: SerialGate
        let log: @Sendable (String) -> Void
        private let tasks: [Task<Void, Never>]
        private let watcher: TreeWatcher
        private let lock: LibraryLock

        init(sync: LocalSync, library: URL, index: LibraryIndex, config: CurrentConfig, gate: SerialGate, log: @escaping @Sendable (String) -> Void,
             tasks: [Task<Void, Never>], watcher: TreeWatcher, lock: LibraryLock) {
            self.sync = sync
            self.library = library
            self.index = index
            self.config = config
            self.gate = gate
            self.log = log
            self.tasks = tasks
            self.watcher = watcher
            self.lock = lock
        }

        func stop() async {
            for task in tasks { task.cancel() }
            watcher.stop()
            await sync.stop()
            withExtendedLifetime(lock) {}
        }
    }

    static func start(libraryPath: String, arguments: ParsedArguments, console: Console, home: StateHome) async throws -> Running {
        let (library, createdLibrary) = try DirectoryArgument.creatingIfMissing(libraryPath)
        let modes = NewFileModes(chmod: try arguments.value(ServeCommand.chmod))
        let exclusions = try ExcludeOptions.exclusions(from: arguments)
        let listenText = try arguments.value(ServeCommand.listen) ?? "[::]:\(DeviceConfig.defaultPort)"
        guard let listen = PeerAddress(parsing: listenText) else {
            throw UsageError(message: "'\(listenText)' is not ADDR:PORT", hint: "For example 0.0.0.0:7878 or [::]:7878")
        }
        let identity = try home.identity()
        let config = try DeviceConfig.load(from: home.configURL, ownID: identity.deviceID)
        // Held until stopped: a second serve or a pull into this library stops at once (exit 75).
        let libraryLock = try LibraryLock.forReceiving(into: library)
        let ledger = try home.ledger()
        let index = try await HashUpgradeNotice.upgradedIndex(for: library, home: home, ledger: ledger, exclusions: exclusions, console: console)
        let log = ServeCommand.logger(console)
        if createdLibrary { log("created the library folder \(library.path)") }

        // Index what the library already holds, so offers of it move no bytes. The same
        // rules decide what a pull is offered: the serving side's exclusions apply to pulls.
        let scanner = LibraryScanner(root: library, cache: index.scanCache, chunkIndex: index.chunkIndex, exclusions: exclusions)
        do {
            let scan = try await scanner.scan()
            log("library \(library.path): \(scan.statistics.files) files indexed")
        } catch {
            throw CommandFailure(message: "cannot scan the library: \(error)", exitCode: .ioError)
        }

        let advertise = !arguments[ServeCommand.noAdvertise]
        let discovery: (any Discovery)? = advertise ? DNSSDDiscovery(configuration: .init(localDeviceID: identity.deviceID.description)) : nil
        let interactive = Prompter.isInteractive
        let sync = LocalSync(
            identity: identity, store: ledger,
            configuration: .init(deviceName: config.name, library: library, libraryChunkIndex: index.chunkIndex,
                                 libraryScanCache: index.scanCache, newFileModes: modes, trust: config.trustPolicy,
                                 decisionTimeout: interactive ? WireProtocol.consentTimeout : .seconds(5),
                                 sendBudget: try BandwidthOption.budget(from: arguments), log: log),
            transport: TCPTransport(), discovery: discovery)
        await sync.servePulls(from: library) { _ in
            (try? await scanner.scan().assets) ?? []
        }
        // Trusted devices may ask whether this library holds their contents (offload, verify --repair).
        await sync.serveHoldings(from: library) {
            (try? await scanner.scan().assets) ?? []
        }
        // Syncs from trusted devices, and path states for those allowed to pull.
        let currentConfig = CurrentConfig(config)
        let gate = SerialGate()
        await ServeSync(sync: sync, library: library, index: index, exclusions: exclusions, ledger: ledger,
                        device: DeviceShortID.of(identity.deviceID), config: currentConfig, gate: gate,
                        retentionDays: VersionsArea.defaultRetentionDays, log: log).start()
        // A holding check is answered from the library as it is: files copied in or changed by
        // hand (not only what this serve received) make the next check look again.
        let rules = (try? exclusions.effectiveRules(forLibraryAt: library.path)) ?? IgnoreRules()
        let watcher = TreeWatcher(rootPath: library.path) { rules.isExcluded($0, isDirectory: true) }
        let libraryChanges = Task {
            for await event in watcher.events() {
                switch event {
                case .ready: continue
                case .watchLimitReached:
                    log("watching the library for holding checks: the inotify limit was reached; changes by hand below unwatched folders are seen within 30 s")
                default: sync.holdingsChanged()
                }
            }
        }
        let bound: PeerAddress
        do { bound = try await sync.start(listeningOn: listen, advertise: advertise) } catch {
            libraryChanges.cancel()
            watcher.stop()
            throw CommandFailure(message: "\(error)", exitCode: .temporaryFailure)
        }
        log("listening on \(bound) as \(config.name) (\(identity.deviceID))\(advertise ? "" : ", not advertising")")
        let prompter = interactive ? Prompter() : nil
        // `lfsync trust` and `untrust` write the config file; they apply here without a restart.
        let trustChanges = ConfigWatcher(url: home.configURL, ownID: identity.deviceID).start(log: log) { changed in
            currentConfig.replace(with: changed)
            await sync.updateTrust(changed.trustPolicy)
            log("trust changed: \(changed.peers.count) trusted device\(changed.peers.count == 1 ? "" : "s")")
        }
        let requests = Task {
            for await request in sync.connectionRequests() where request.isPending {
                let prompt = ConnectionPrompt(peer: request.peer, config: config)
                if let prompter {
                    prompter.ask(prompt.question, isOpen: { request.isPending }) { yes in
                        if yes {
                            Task {
                                do throws(ConnectionRequestError) {
                                    try await request.accept()
                                    log("accepted connection from \(prompt.summary)")
                                } catch {
                                    log("could not accept the connection from \(prompt.summary): \(error)")
                                }
                            }
                        } else {
                            request.decline()
                            log("declined connection from \(prompt.summary)")
                        }
                    }
                } else {
                    request.decline()
                    log("declined connection from \(prompt.summary): not trusted, and no terminal to ask")
                }
            }
        }
        let offers = Task {
            for await offer in sync.incomingTransfers() {
                let description = "\(offer.from) offers \(offer.fileCount) file\(offer.fileCount == 1 ? "" : "s"), \(ByteCountText.format(offer.totalByteCount))"
                if offer.acceptedAutomatically {
                    // Consent only: what lands (or is refused, for room) is logged when the push ends.
                    log("\(description) (trusted with --auto-accept)")
                    ServeCommand.report(offer, log: log)
                } else if !offer.isPending {
                    continue
                } else if let prompter {
                    prompter.ask("\(description). Accept?", isOpen: { offer.isPending }) { yes in
                        if yes {
                            ServeCommand.report(offer, log: log)
                        } else {
                            offer.decline()
                        }
                        log("\(description): \(yes ? "accepted" : "declined")")
                    }
                } else {
                    offer.decline()
                    log("\(description): declined (not trusted with --auto-accept, and no terminal to ask)")
                }
            }
        }
        return Running(sync: sync, library: library, index: index, config: currentConfig, gate: gate, log: log,
                       tasks: [libraryChanges, trustChanges, requests, offers], watcher: watcher, lock: libraryLock)
    }
}
