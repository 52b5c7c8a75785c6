/// One `lfsync` command: its entry in the command model and what it does.
///
/// `spec` lists the command's typed `Flag`s and `Option`s, and `run` reads
/// them back through the same values, so the parser, the help, the man page,
/// the completions and the code agree by construction. `LFSyncCommands`
/// builds the model from the list of conforming types, and `LFSyncMain`
/// dispatches through that list: there is no second table of names.
protocol LFSyncCommand: SendableMetatype {
    static var spec: CommandSpec { get }
    init(arguments: ParsedArguments, console: Console)
    func run() async throws -> ExitCode
}
