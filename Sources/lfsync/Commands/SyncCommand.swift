import Foundation
import LocalFirstSync
import LFSyncContent
import LFSyncCrypto
import LFSyncSystem

/// `lfsync sync PATH --with PEER[,PEER] | --all [--delete]`: one service per device. It
/// serves PATH (takes the other devices' pushes and syncs into it) and watches it (pushes
/// and syncs what changes here to them), on one engine and one connection per device — what
/// `serve` and `watch` do apart. A household where every device runs it converges: a change
/// made on any device reaches every other, through whichever device is on.
struct SyncCommand {
    let arguments: ParsedArguments
    let console: Console
    let home = StateHome()

    func run() async throws -> ExitCode {
        MemoryTuning.preferSmallResidentSize()
        let targetsText = try arguments.values(Self.with).flatMap { $0.split(separator: ",").map(String.init) }
        guard !targetsText.isEmpty || arguments[PushCommand.all] else {
            throw UsageError(message: "sync needs --with PEER or --all", hint: "Run 'lfsync sync --help' for usage.")
        }
        guard arguments.positionals.count == 1 else {
            throw UsageError(message: "sync takes one library: lfsync sync PATH", hint: "Run one 'lfsync sync' per library.")
        }
        let settle = try arguments.value(WatchCommand.settle) ?? 3
        let rescan = try arguments.value(WatchCommand.rescanInterval) ?? 60
        let identity = try home.identity()
        let config = try DeviceConfig.load(from: home.configURL, ownID: identity.deviceID)
        let targets = try WatchTargets(names: targetsText, all: arguments[PushCommand.all], config: config, localDeviceID: identity.deviceID)
        let running = try await ServeRunner.start(libraryPath: arguments.positionals[0], arguments: arguments, console: console, home: home)
        let loop = WatchLoop(
            libraries: [running.library], indexes: [running.index], exclusions: try ExcludeOptions.exclusions(from: arguments),
            targets: targets, sync: running.sync, ledger: try home.ledger(), home: home, console: console, json: arguments[LFSyncCommands.json],
            schedule: WatchSchedule(settle: .milliseconds(Int64(settle * 1000)), maxDelay: .seconds(30)),
            rescanInterval: .milliseconds(Int64(rescan * 1000)),
            watchLimit: ProcessInfo.processInfo.environment["LFSYNC_WATCH_LIMIT"].flatMap(Int.init),
            deletions: arguments[PushCommand.delete], maxDeletions: try arguments.value(PushCommand.maxDelete),
            device: DeviceShortID.of(identity.deviceID), recordGate: running.gate)
        let exit = await loop.run()
        await running.stop()
        return exit
    }
}

extension SyncCommand: LFSyncCommand {
    static let with = Option<String>("with", valueName: "PEER[,PEER...]", help: "The devices to keep in sync with: names or Device IDs of trusted devices.", completion: .peer)

    static let spec = CommandSpec(
        name: "sync",
        abstract: "Keep a library in sync with other devices: serve and watch in one service",
        discussion: """
            Serves PATH and watches it, on one engine: what the devices named by --with (or every trusted device, --all) push and sync arrives in PATH as with 'lfsync serve', and what changes in PATH goes to them as with 'lfsync watch' — new files pushed, then edits, renames and (with --delete) deletions applied on each by a sync, which keeps what it replaces in that device's .lfsync/versions. A device that is off gets everything it missed when it comes back, through whichever device is on. Each other device must trust this one with --auto-accept for its syncs to be applied there (and with --deletions mirror to apply its deletions without --delete here). One service per device: contrib/systemd/lfsync-sync.service runs it. Stops on Ctrl-C or SIGTERM.
            """,
        options: [
            with.spec,
            PushCommand.all.spec,
            PushCommand.delete.spec,
            PushCommand.maxDelete.spec,
            ServeCommand.listen.spec,
            ServeCommand.noAdvertise.spec,
            ServeCommand.chmod.spec,
            WatchCommand.settle.spec,
            WatchCommand.rescanInterval.spec,
            BandwidthOption.limit.spec,
            LFSyncCommands.json.spec,
        ] + ExcludeOptions.specs,
        arguments: [ArgumentSpec(name: "PATH", help: "The library to keep in sync (created when missing).", completion: .directory)],
        examples: ["lfsync sync ~/Pictures --all", "lfsync sync /srv/photos --with laptop,desktop --delete --listen 0.0.0.0:7878"]
    )
}
