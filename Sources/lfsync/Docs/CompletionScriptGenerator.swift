/// Writes shell completion scripts from the command model, so completion
/// offers exactly the commands, options and values the parser accepts.
///
/// The scripts are static: everything is decided when they are generated,
/// except peer names, which change at run time and are asked of
/// `lfsync __complete peers` (one name per line; nothing offered if it fails).
struct CompletionScriptGenerator {
    let model: CommandModel

    func script(for shell: Shell) -> String {
        switch shell {
        case .bash: BashCompletionScript(model: model).render()
        case .zsh: ZshCompletionScript(model: model).render()
        case .fish: FishCompletionScript(model: model).render()
        }
    }
}

extension CommandModel {
    /// What may come before a command. Mirrors `ArgumentParser.parse`, which
    /// accepts only these in first position (global options like `-q` are
    /// accepted after the command).
    var leadingOptions: [OptionSpec] {
        globalOptions.filter { $0.long == "help" }
            + [OptionSpec(long: "version", help: "Print the \(toolName) version.")]
    }

    /// A command's own options followed by the global ones, as the parser looks them up.
    func allOptions(of command: CommandSpec) -> [OptionSpec] {
        command.options + globalOptions
    }
}

extension OptionSpec {
    /// `-q` and `--quiet`, short first.
    var spellings: [String] {
        (short.map { ["-\($0)"] } ?? []) + ["--\(long)"]
    }
}
