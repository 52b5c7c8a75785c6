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
        let running = try await ServeRunner.start(libraryPath: libraryPath, arguments: arguments, console: console, home: home)
        let signal = await SignalWaiter.wait()
        running.log("stopping (signal \(signal))")
        await running.stop()
        return .success
    }

    /// Accepts `offer` and logs, when its push ends, what was stored and what failed.
    static func report(_ offer: IncomingTransfer, log: @escaping @Sendable (String) -> Void) {
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
