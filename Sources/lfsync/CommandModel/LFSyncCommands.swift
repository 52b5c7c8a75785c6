/// The lfsync command line, as data: the parser, `--help`, `man/lfsync.1` and
/// the completion scripts are all generated from this model, which is made
/// of the `spec` of each command type (`LFSyncCommand`).
enum LFSyncCommands {
    static let model = CommandModel(
        toolName: "lfsync",
        abstract: "local-first, peer-to-peer photo and file sync between your own devices",
        globalOptions: [quiet.spec, verbose.spec, help_.spec],
        commands: runnable.map { $0.spec } + [help, version]
    )

    /// The commands in the order `lfsync help` lists them; `LFSyncMain` runs them from this list.
    static let runnable: [any LFSyncCommand.Type] = [
        InitCommand.self, IDCommand.self, PeersCommand.self, TrustCommand.self, UntrustCommand.self, ServeCommand.self,
        SyncCommand.self, PushCommand.self, WatchCommand.self, PullCommand.self, StatusCommand.self, WhereisCommand.self, OffloadCommand.self,
        VersionsCommand.self, RestoreCommand.self, ScanCommand.self, VerifyCommand.self, CompletionsCommand.self,
    ]

    static let quiet = Flag("quiet", short: "q", help: "Print nothing but errors.")
    static let verbose = Flag("verbose", short: "v", help: "Print more detail.")
    static let help_ = Flag("help", short: "h", help: "Show help for the command.")
    static let json = Flag("json", help: "Print machine-readable JSON (stable keys) instead of text.")

    static let help = CommandSpec(
        name: "help",
        abstract: "Show help for lfsync or one of its commands",
        arguments: [ArgumentSpec(name: "COMMAND", help: "The command to explain.", isOptional: true, completion: .command)]
    )

    static let version = CommandSpec(name: "version", abstract: "Print the lfsync version")
}
