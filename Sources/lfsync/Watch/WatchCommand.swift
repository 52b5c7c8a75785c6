import Foundation
import LocalFirstSync
import LFSyncCrypto
import LFSyncContent
import LFSyncStore
import LFSyncTransport
import LFSyncDiscovery
import LFSyncSystem
import LFSyncTCP

/// `lfsync watch PATH... --to PEER[,PEER] | --all`: continuous sync. Watches
/// every PATH with inotify and pushes what changed once it has settled, to
/// every target that is reachable; a target that is not is dialled again with
/// back-off (at once when it appears on DNS-SD) and then gets everything it
/// missed, which the ledger knows.
struct WatchCommand {
    let arguments: ParsedArguments
    let console: Console
    let home = StateHome()

    func run() async throws -> ExitCode {
        MemoryTuning.preferSmallResidentSize()
        let targetsText = try arguments.values(PushCommand.to).flatMap { $0.split(separator: ",").map(String.init) }
        guard !targetsText.isEmpty || arguments[PushCommand.all] else {
            throw UsageError(message: "watch needs --to PEER or --all", hint: "Run 'lfsync watch --help' for usage.")
        }
        guard !arguments.positionals.isEmpty else { throw UsageError(message: "missing argument PATH", hint: "Run 'lfsync watch --help' for usage.") }
        let libraries = try arguments.positionals.map { try DirectoryArgument.existing($0) }
        let exclusions = try ExcludeOptions.exclusions(from: arguments)
        let settle = try arguments.value(Self.settle) ?? 3
        let rescan = try arguments.value(Self.rescanInterval) ?? 60
        let identity = try home.identity()
        let config = try DeviceConfig.load(from: home.configURL, ownID: identity.deviceID)
        let ledger = try home.ledger()
        var indexes: [LibraryIndex] = []
        for library in libraries {
            indexes.append(try await HashUpgradeNotice.upgradedIndex(for: library, home: home, ledger: ledger, exclusions: exclusions, console: console))
        }
        let budget = try BandwidthOption.budget(from: arguments)
        // Unattended by nature: every target must be a trusted device (no one is there to say yes).
        let targets = try WatchTargets(names: targetsText, all: arguments[PushCommand.all], config: config, localDeviceID: identity.deviceID)

        let sync = LocalSync(
            identity: identity, store: ledger,
            configuration: .init(deviceName: config.name, trust: config.trustPolicy, sendBudget: budget),
            transport: TCPTransport())
        let loop = WatchLoop(
            libraries: libraries, indexes: indexes, exclusions: exclusions, targets: targets, sync: sync, ledger: ledger,
            home: home, console: console, json: arguments[LFSyncCommands.json],
            schedule: WatchSchedule(settle: .milliseconds(Int64(settle * 1000)), maxDelay: .seconds(30)),
            rescanInterval: .milliseconds(Int64(rescan * 1000)),
            watchLimit: ProcessInfo.processInfo.environment["LFSYNC_WATCH_LIMIT"].flatMap(Int.init),
            deletions: arguments[PushCommand.delete], maxDeletions: try arguments.value(PushCommand.maxDelete),
            device: DeviceShortID.of(identity.deviceID))
        return await loop.run()
    }
}

extension WatchCommand: LFSyncCommand {
    static let settle = Option<Double>(
        "settle", valueName: "SECONDS", help: "Send a file once nothing in its tree changed for this long (default 3).",
        expected: "a number of seconds from 0.1 to 600") { Double($0).flatMap { (0.1...600).contains($0) ? $0 : nil } }
    static let rescanInterval = Option<Double>(
        "rescan-interval", valueName: "SECONDS",
        help: "When inotify cannot watch the whole tree, rescan this often instead (default 60).",
        expected: "a number of seconds from 1 to 86400") { Double($0).flatMap { (1...86400).contains($0) ? $0 : nil } }

    static let spec = CommandSpec(
        name: "watch",
        abstract: "Keep peers in sync continuously: send what changes as soon as it settles",
        discussion: """
            Watches each PATH with inotify (new folders included) and pushes new and changed files to the target peers once nothing has changed for --settle seconds (never a file still being written), at most 30 s after a burst began, so an import of a thousand photos goes out as a few offers. A target that cannot be reached is dialled again with back-off (5 s doubling to 5 min, at once when it appears on DNS-SD) and then gets everything it missed. If inotify cannot watch every folder (the kernel's fs.inotify.max_user_watches) or its queue overflows, it says so once and rescans every --rescan-interval seconds instead; the scan cache makes a rescan cheap. After each push, every target that keeps path versions syncs with the library: edits replace the files they descend from (the replaced version kept in its .lfsync/versions), renames move, and with --delete deletions travel (--max-delete N caps them). Logs one line per push and per sync that changed something (--json: one JSON object per line). On SIGTERM or Ctrl-C it finishes the push in flight, then exits 0. Trust changes apply at once. Locking: each push takes the same lock as 'push --batch' for its duration, so a cron 'push --batch' that starts meanwhile exits 75 (try again later) and a watch push waits for a running batch push to end; the two never send at the same time. Every target must be a trusted device.
            """,
        options: [
            PushCommand.to.spec,
            PushCommand.all.spec,
            settle.spec,
            rescanInterval.spec,
            BandwidthOption.limit.spec,
            PushCommand.delete.spec,
            PushCommand.maxDelete.spec,
            LFSyncCommands.json.spec,
        ] + ExcludeOptions.specs,
        arguments: [ArgumentSpec(name: "PATH", help: "Folders to watch and send.", isRepeating: true, completion: .directory)],
        examples: ["lfsync watch ~/Pictures --to nas", "lfsync watch ~/Pictures ~/Videos --all --bwlimit 5M"]
    )
}
