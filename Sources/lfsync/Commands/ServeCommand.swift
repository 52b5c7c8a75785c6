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

/// `lfsync serve PATH [--listen ADDR:PORT] [--no-advertise]`:
/// the receiving side. One log line per event on stderr.
struct ServeCommand {
    let arguments: ParsedArguments
    let console: Console
    let home = StateHome()

    func run() async throws -> ExitCode {
        guard let libraryPath = try LibraryArgument.path(arguments, legacy: Self.library, console: console) else {
            throw UsageError(message: "serve needs the library to receive into: lfsync serve PATH", hint: "Run 'lfsync serve --help' for usage.")
        }
        let (library, createdLibrary) = try DirectoryArgument.creatingIfMissing(libraryPath)
        let modes = NewFileModes(chmod: try arguments.value(Self.chmod))
        let exclusions = try ExcludeOptions.exclusions(from: arguments)
        let listenText = try arguments.value(Self.listen) ?? "[::]:\(DeviceConfig.defaultPort)"
        guard let listen = PeerAddress(parsing: listenText) else {
            throw UsageError(message: "'\(listenText)' is not ADDR:PORT", hint: "For example 0.0.0.0:7878 or [::]:7878")
        }
        let identity = try home.identity()
        let config = try DeviceConfig.load(from: home.configURL, ownID: identity.deviceID)
        // Held until serve stops: a second serve or a pull into this library stops at once (exit 75).
        let libraryLock = try LibraryLock.forReceiving(into: library)
        defer { withExtendedLifetime(libraryLock) {} }
        let ledger = try home.ledger()
        let index = try await HashUpgradeNotice.upgradedIndex(for: library, home: home, ledger: ledger, exclusions: exclusions, console: console)
        let log = Self.logger(console)
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

        let advertise = !arguments[Self.noAdvertise]
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
        defer {
            libraryChanges.cancel()
            watcher.stop()
        }
        let bound: PeerAddress
        do { bound = try await sync.start(listeningOn: listen, advertise: advertise) } catch {
            throw CommandFailure(message: "\(error)", exitCode: .temporaryFailure)
        }
        log("listening on \(bound) as \(config.name) (\(identity.deviceID))\(advertise ? "" : ", not advertising")")
        let prompter = interactive ? Prompter() : nil
        // `lfsync trust` and `untrust` write the config file; they apply here without a restart.
        let trustChanges = ConfigWatcher(url: home.configURL, ownID: identity.deviceID).start(log: log) { changed in
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
                    Self.report(offer, log: log)
                } else if !offer.isPending {
                    continue
                } else if let prompter {
                    prompter.ask("\(description). Accept?", isOpen: { offer.isPending }) { yes in
                        if yes {
                            Self.report(offer, log: log)
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
        let signal = await SignalWaiter.wait()
        log("stopping (signal \(signal))")
        trustChanges.cancel()
        requests.cancel()
        offers.cancel()
        await sync.stop()
        return .success
    }

    /// Accepts `offer` and logs, when its push ends, what was stored and what failed.
    private static func report(_ offer: IncomingTransfer, log: @escaping @Sendable (String) -> Void) {
        let peer = offer.from
        Task {
            let outcomes: [ContentID: ReceiveSessionHandle.Outcome]
            do { outcomes = try await offer.accept().files() } catch {
                log("\(offer.from): \(error)")
                return
            }
            let stored = outcomes.values.filter { if case .stored = $0 { true } else { false } }.count
            let present = outcomes.values.filter { if case .alreadyPresent = $0 { true } else { false } }.count
            var line = "from \(peer): \(stored) stored"
            if present > 0 { line += ", \(present) already here" }
            let failures = outcomes.compactMap { id, outcome -> String? in
                if case let .failed(reason) = outcome { return "\(id.hash.shortHex): \(reason)" }
                return nil
            }
            if !failures.isEmpty { line += ", \(failures.count) failed (\(failures.sorted().prefix(3).joined(separator: "; ")))" }
            log(line)
        }
    }

    static func logger(_ console: Console) -> @Sendable (String) -> Void {
        let quiet = console.verbosity == .quiet
        return { line in
            guard !quiet else { return }
            let stamp = ISO8601DateFormatter().string(from: Date())
            Console.writeError("\(stamp) \(line)\n")
        }
    }
}

extension ServeCommand: LFSyncCommand {
    static let library = Option<String>("library", valueName: "DIR", help: "Deprecated spelling of PATH.", completion: .directory)
    static let listen = Option<String>("listen", valueName: "ADDR:PORT", help: "Address to listen on (default [::]:7878).")
    static let noAdvertise = Flag("no-advertise", help: "Do not advertise; peers connect by address.")
    static let chmod = Option<ChmodRules>(
        "chmod", valueName: "CHMOD",
        help: "Change the modes of received files and new folders, in rsync's --chmod syntax (e.g. Dg+s,ug+w,Fo-w or D2775,F664); the umask still applies.",
        expected: "rsync --chmod rules such as ug+rw,o-w or D2775,F664"
    ) { try? ChmodRules(parsing: $0) }
    static let bandwidthLimit = BandwidthOption.limit

    static let spec = CommandSpec(
        name: "serve",
        abstract: "Receive from other devices into a library",
        discussion: "Listens for connections, advertises this device over DNS-SD, and asks on the terminal before accepting an unknown device (showing its full Device ID, and warning when it uses the name of a trusted device) or an offer. Offers from devices trusted with --auto-accept are accepted without asking; everything else is declined when there is no terminal. Pulls are answered only for devices trusted with --allow-pull. Holds the library's lock (.lfsync/lock in PATH) while it runs: a second serve or a pull into the same library exits 75. Creates PATH when it is missing (not its parents). A received file gets the sender's permission bits, changed by --chmod and masked by the umask, never setuid, setgid or sticky (as rsync without --perms); new folders get 0777 less the umask, changed by --chmod's D rules (Dg+s keeps the parent's group on new folders). Changes made with 'lfsync trust' and 'untrust' apply at once: a device no longer trusted is disconnected. Logs one line per event; stops on Ctrl-C or SIGTERM.",
        options: [
            listen.spec,
            noAdvertise.spec,
            chmod.spec,
            bandwidthLimit.spec,
        ] + ExcludeOptions.specs + [library.spec],
        arguments: [LibraryArgument.argument("The library to receive into (created when missing).")],
        examples: ["lfsync serve ~/Pictures", "lfsync serve /srv/photos --listen 0.0.0.0:7878 --no-advertise"]
    )
}
