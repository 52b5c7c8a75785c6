/// The lfsync command line, as data: the parser, `--help`, `man/lfsync.1` and
/// the completion scripts are all generated from this one table.
enum LFSyncCommands {
    static let model = CommandModel(
        toolName: "lfsync",
        abstract: "local-first, peer-to-peer photo and file sync between your own devices",
        globalOptions: [
            OptionSpec(long: "quiet", short: "q", help: "Print nothing but errors."),
            OptionSpec(long: "verbose", short: "v", help: "Print more detail."),
            OptionSpec(long: "help", short: "h", help: "Show help for the command."),
        ],
        commands: [init_, id, peers, trust, untrust, serve, push, pull, status, scan, verify, completions, help, version]
    )

    static let json = OptionSpec(long: "json", help: "Print machine-readable JSON (stable keys) instead of text.")
    static let peerCompletion = CompletionKind.peer

    static let init_ = CommandSpec(
        name: "init",
        abstract: "Create this device's identity and state (safe to run again)",
        discussion: "Creates the identity key (mode 0600) and the state directory, and prints the Device ID other devices use to trust this one. Running it again changes nothing but the name, if given.",
        options: [OptionSpec(long: "name", valueName: "NAME", help: "The name other devices see (default: the host name)."), json],
        examples: ["lfsync init --name laptop"]
    )

    static let id = CommandSpec(
        name: "id",
        abstract: "Print this device's Device ID and name",
        options: [json],
        examples: ["lfsync id", "lfsync id --json"]
    )

    static let peers = CommandSpec(
        name: "peers",
        abstract: "Discover nearby devices and list trusted ones",
        discussion: "Browses the local network over DNS-SD for a few seconds and lists each device found (name, Device ID, address, whether it is trusted and, if so, whether its offers are auto-accepted and whether it may pull), followed by trusted devices that were not seen. Without a running avahi-daemon only trusted devices with a known address are listed, with a note.",
        options: [OptionSpec(long: "timeout", valueName: "SECONDS", help: "How long to browse (default 3)."), json],
        examples: ["lfsync peers", "lfsync peers --timeout 10 --json"]
    )

    static let trust = CommandSpec(
        name: "trust",
        abstract: "Trust a device by its Device ID",
        discussion: "A trusted device may connect without a question. With --auto-accept its offers are also accepted without asking, which is what unattended (cron) pushes to this device need. With --allow-pull it may pull: be offered everything this device serves that it lacks, including what other devices sent here. The two are separate, and neither implies the other. Trusting a device again keeps its name and address unless given, and sets both permissions to exactly what that run says.",
        options: [
            OptionSpec(long: "name", valueName: "NAME", help: "A name to refer to the device by (default: its short ID)."),
            OptionSpec(long: "address", valueName: "HOST:PORT", help: "Where to reach it when discovery cannot find it."),
            OptionSpec(long: "auto-accept", help: "Accept its offers without asking."),
            OptionSpec(long: "allow-pull", help: "Let it pull everything this device serves (not implied by --auto-accept)."),
        ],
        arguments: [ArgumentSpec(name: "DEVICE-ID", help: "The Device ID printed by 'lfsync id' on that device.")],
        examples: ["lfsync trust ABCDEFG-HIJKLMN-... --name laptop --auto-accept",
                   "lfsync trust ABCDEFG-HIJKLMN-... --name nas --address nas.local:7878 --allow-pull"]
    )

    static let untrust = CommandSpec(
        name: "untrust",
        abstract: "Stop trusting a device",
        arguments: [ArgumentSpec(name: "PEER", help: "Name or Device ID (or a unique prefix).", completion: .peer)],
        examples: ["lfsync untrust nas"]
    )

    static let serve = CommandSpec(
        name: "serve",
        abstract: "Receive from other devices into a library",
        discussion: "Listens for connections, advertises this device over DNS-SD, and asks on the terminal before accepting an unknown device (showing its full Device ID, and warning when it uses the name of a trusted device) or an offer. Offers from devices trusted with --auto-accept are accepted without asking; everything else is declined when there is no terminal. Pulls are answered only for devices trusted with --allow-pull. Holds the library's lock (.lfsync/lock in DIR) while it runs: a second serve or a pull into the same library exits 75. Logs one line per event; stops on Ctrl-C or SIGTERM.",
        options: [
            OptionSpec(long: "library", valueName: "DIR", help: "The folder to receive into (required).", completion: .directory),
            OptionSpec(long: "listen", valueName: "ADDR:PORT", help: "Address to listen on (default [::]:7878)."),
            OptionSpec(long: "advertise", help: "Advertise over DNS-SD (the default)."),
            OptionSpec(long: "no-advertise", help: "Do not advertise; peers connect by address."),
        ],
        examples: ["lfsync serve --library ~/Pictures", "lfsync serve --library /srv/photos --listen 0.0.0.0:7878 --no-advertise"]
    )

    static let push = CommandSpec(
        name: "push",
        abstract: "Send what peers lack: scan, offer, send only missing chunks",
        discussion: "Scans each PATH, connects to the target peers, offers the assets and sends each peer only the chunks it does not have, with one progress line per peer on a terminal. With --batch it never prompts, takes a lock, prints nothing on success and exits 0 only when every peer confirmed every asset (1 some failed, 69 a peer was unreachable, 75 another run holds the lock, 77 declined).",
        options: [
            OptionSpec(long: "to", valueName: "PEER[,PEER...]", help: "Target peers: names, Device IDs (or unique prefixes) or HOST:PORT.", completion: .peer),
            OptionSpec(long: "all", help: "Send to every trusted peer."),
            OptionSpec(long: "batch", help: "Unattended: never prompt, lock, quiet on success, strict exit codes."),
            OptionSpec(long: "dry-run", help: "Scan and show what would be offered; send nothing."),
            OptionSpec(long: "progress", valueName: "MODE", help: "Progress on stderr: auto (a terminal only), plain, json or none.", completion: .choices(["auto", "plain", "json", "none"])),
            json,
        ],
        arguments: [ArgumentSpec(name: "PATH", help: "Folders to send.", isRepeating: true, completion: .directory)],
        examples: ["lfsync push ~/Pictures --to nas", "lfsync push ~/Pictures --all --batch"]
    )

    static let pull = CommandSpec(
        name: "pull",
        abstract: "Receive what a trusted peer has that this device lacks",
        discussion: "Connects to PEER and asks it to offer everything it serves that this device lacks; PEER answers only when it trusts this device with --allow-pull (exit 77 otherwise). Holds the library's lock like serve: exits 75 when a serve or another pull is receiving into DIR.",
        options: [
            OptionSpec(long: "from", valueName: "PEER", help: "The peer to pull from (it must trust this device with --allow-pull).", completion: .peer),
            OptionSpec(long: "library", valueName: "DIR", help: "The folder to receive into.", completion: .directory),
            OptionSpec(long: "batch", help: "Unattended: never prompt, lock, quiet on success."),
        ],
        examples: ["lfsync pull --from nas --library ~/Pictures"]
    )

    static let status = CommandSpec(
        name: "status",
        abstract: "Show what is synced with which peer",
        discussion: "Per peer: whether its offers are accepted without asking (auto-accept) and whether it may pull, and how many assets are synced, pending, in flight or failed, and their bytes. With PATH, only the assets in that folder are counted, and assets never offered count as pending. With -v, one line per asset.",
        options: [OptionSpec(long: "peer", valueName: "PEER", help: "Only this peer.", completion: .peer), json],
        arguments: [ArgumentSpec(name: "PATH", help: "Count only the assets in this folder.", isOptional: true, completion: .directory)],
        examples: ["lfsync status", "lfsync status ~/Pictures --peer nas -v"]
    )

    static let scan = CommandSpec(
        name: "scan",
        abstract: "List the assets lfsync sees in a folder (what would be synced)",
        discussion: "Walks DIR without following symbolic links, groups Live Photo pairs (by their Apple content identifier first, same name second), RAW+JPEG pairs and sidecars into assets, and prints each asset's kind, files, roles, sizes and content ID. Unchanged files are taken from the scan cache in the state directory, so a rescan reads no file content.",
        options: [json, OptionSpec(long: "no-cache", help: "Hash every file; neither read nor update the scan cache.")],
        arguments: [ArgumentSpec(name: "DIR", help: "The library folder to scan.", completion: .directory)],
        examples: ["lfsync scan ~/Pictures", "lfsync scan --json ~/Pictures | jq '.assets | length'"]
    )

    static let verify = CommandSpec(
        name: "verify",
        abstract: "Re-hash a library and report corrupted files",
        discussion: "Reads every file again and compares it with the hashes recorded when it was last scanned. A file whose content changed while its size and modification time did not is reported as corrupt (exit 1).",
        options: [OptionSpec(long: "library", valueName: "DIR", help: "The folder to verify (default: the current directory).", completion: .directory), json],
        examples: ["lfsync verify --library ~/Pictures"]
    )

    static let completions = CommandSpec(
        name: "completions",
        abstract: "Print a shell completion script",
        arguments: [ArgumentSpec(name: "SHELL", help: "bash, zsh or fish.", completion: .choices(["bash", "zsh", "fish"]))],
        examples: ["source <(lfsync completions bash)", "lfsync completions fish > ~/.config/fish/completions/lfsync.fish"]
    )

    static let help = CommandSpec(
        name: "help",
        abstract: "Show help for lfsync or one of its commands",
        arguments: [ArgumentSpec(name: "COMMAND", help: "The command to explain.", isOptional: true, completion: .command)]
    )

    static let version = CommandSpec(name: "version", abstract: "Print the lfsync version")
}
