/// `lfsync completions SHELL`: prints the completion script for bash, zsh or
/// fish, generated from the command model of this very binary, so a script
/// loaded with `source <(lfsync completions bash)` always matches it.
struct CompletionsCommand {
    let arguments: ParsedArguments
    let console: Console

    func run() throws -> ExitCode {
        let name = arguments.positionals.first ?? ""
        guard let shell = Shell(rawValue: name) else {
            throw UsageError(
                message: "unsupported shell '\(name)' (one of: \(Shell.allCases.map(\.rawValue).joined(separator: ", ")))",
                hint: "Run 'lfsync completions --help' for usage.")
        }
        // The script already ends with a newline.
        print(CompletionScriptGenerator(model: LFSyncCommands.model).script(for: shell), terminator: "")
        return .success
    }
}

extension CompletionsCommand: LFSyncCommand {
    static let spec = CommandSpec(
        name: "completions",
        abstract: "Print a shell completion script",
        arguments: [ArgumentSpec(name: "SHELL", help: "bash, zsh or fish.", completion: .choices(["bash", "zsh", "fish"]))],
        examples: ["source <(lfsync completions bash)", "lfsync completions fish > ~/.config/fish/completions/lfsync.fish"]
    )
}
