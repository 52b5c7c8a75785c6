/// The lfsync command line, as data.
enum LFSyncCommands {
    static let model = CommandModel(
        toolName: "lfsync",
        abstract: "local-first, peer-to-peer photo and file sync between your own devices",
        globalOptions: [
            OptionSpec(long: "quiet", short: "q", help: "Print nothing but errors."),
            OptionSpec(long: "verbose", short: "v", help: "Print more detail."),
            OptionSpec(long: "help", short: "h", help: "Show help for the command."),
        ],
        commands: [scan, help, version]
    )

    static let scan = CommandSpec(
        name: "scan",
        abstract: "List the assets lfsync sees in a folder (what would be synced)",
        discussion: """
            Walks DIR without following symbolic links, groups Live Photo pairs (by their \
            Apple content identifier first, same name second), RAW+JPEG pairs and sidecars \
            into assets, and prints each asset's kind, files, roles, sizes and content ID. \
            Unchanged files are taken from the scan cache in the state directory, so a \
            rescan reads no file content.
            """,
        options: [
            OptionSpec(long: "json", help: "Print machine-readable JSON (stable keys) instead of text."),
            OptionSpec(long: "no-cache", help: "Hash every file; neither read nor update the scan cache."),
        ],
        arguments: [ArgumentSpec(name: "DIR", help: "The library folder to scan.", completion: .directory)],
        examples: ["lfsync scan ~/Pictures", "lfsync scan --json ~/Pictures | jq '.assets | length'"]
    )

    static let help = CommandSpec(
        name: "help",
        abstract: "Show help for lfsync or one of its commands",
        arguments: [ArgumentSpec(name: "COMMAND", help: "The command to explain.", isOptional: true)]
    )

    static let version = CommandSpec(name: "version", abstract: "Print the lfsync version")
}
