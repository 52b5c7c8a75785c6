/// The zsh completion script: `_arguments` specs per command, dispatched from
/// `_lfsync`. The same file works placed in `$fpath` as `_lfsync` (compinit
/// autoloads it) and sourced after `compinit` (it registers itself).
struct ZshCompletionScript {
    let model: CommandModel

    private var tool: String { model.toolName }
    /// `_lfsync` and `_lfsync_<command>`; helpers live under `__lfsync_`, so
    /// no command name can collide with one (there is a `peers` command).
    private var prefix: String { "_" + ShellQuoting.identifier(model.toolName) }
    private var helper: String { "_" + prefix }

    func render() -> String {
        var parts = [header(), helpers()]
        parts += model.commands.map(commandFunction)
        parts += [mainFunction(), footer()]
        return parts.joined(separator: "\n\n") + "\n"
    }

    private func header() -> String {
        #"""
        #compdef \#(tool)
        # zsh completion for \#(tool). Generated from the command model by
        # `\#(tool) __generate-docs`; do not edit.
        # Install as _\#(tool) in a directory on $fpath (before compinit runs), or add
        # `source <(\#(tool) completions zsh)` to ~/.zshrc after compinit.
        """#
    }

    private func helpers() -> String {
        let described = model.commands.map { command in
            "        " + ShellQuoting.single(escapeDescribeName(command.name) + ":" + command.abstract)
        }.joined(separator: "\n")
        return #"""
        # Command names with their abstracts. Extra arguments are compadd options from _arguments.
        \#(helper)_commands() {
            local -a commands=(
        \#(described)
            )
            _describe -t commands '\#(tool) command' commands "$@"
        }

        # Peer names, one per line from `\#(tool) __complete peers`; nothing if it fails.
        # Asks the program being completed (set by \#(prefix)), which need not be on PATH.
        \#(helper)_peers() {
            local output
            local -a peers
            output=$("${\#(helper)_program:-\#(tool)}" __complete peers 2>/dev/null) || return 1
            peers=(${(f)output})
            _wanted peers expl peer compadd "$@" -a peers
        }
        """#
    }

    private func commandFunction(_ command: CommandSpec) -> String {
        var specs = model.allOptions(of: command).flatMap(optionSpecs)
        for (index, argument) in command.arguments.enumerated() {
            let message = escapeSpec(argument.name) + ":" + action(argument.completion)
            if argument.isRepeating {
                specs.append("*:" + message)
                break
            }
            specs.append("\(index + 1):" + (argument.isOptional ? ":" : "") + message)
        }
        let lines = specs.map { "        " + ShellQuoting.single($0) }.joined(separator: " \\\n")
        return """
        \(prefix)_\(ShellQuoting.identifier(command.name))() {
            _arguments -S : \\
        \(lines)
        }
        """
    }

    /// One spec per spelling, each excluding the other so neither is offered twice.
    /// Long options take `--name=value` as well as `--name value`, like the parser;
    /// short ones only `-n value`.
    private func optionSpecs(_ option: OptionSpec) -> [String] {
        let exclusion = option.spellings.count > 1 ? "(\(option.spellings.joined(separator: " ")))" : ""
        let help = "[\(escapeSpec(option.help))]"
        let value = option.valueName.map { ":\(escapeSpec($0)):\(action(option.completion))" } ?? ""
        return option.spellings.map { spelling in
            let takesEquals = !option.isFlag && spelling.hasPrefix("--")
            return exclusion + spelling + (takesEquals ? "=" : "") + help + value
        }
    }

    private func action(_ kind: CompletionKind) -> String {
        switch kind {
        case .none: " "  // a blank action: show the message, offer nothing
        case .file: "_files"
        case .directory: "_files -/"
        case let .choices(choices): "(" + choices.map(escapeChoice).joined(separator: " ") + ")"
        case .peer: "\(helper)_peers"
        case .command: "\(helper)_commands"
        }
    }

    private func mainFunction() -> String {
        let leading = model.leadingOptions.flatMap { option in
            option.spellings.map { "        " + ShellQuoting.single("(- *)\($0)[\(escapeSpec(option.help))]") + " \\" }
        }.joined(separator: "\n")
        let cases = model.commands.map { command in
            "            (\(command.name)) \(prefix)_\(ShellQuoting.identifier(command.name)) && ret=0 ;;"
        }.joined(separator: "\n")
        return #"""
        \#(prefix)() {
            local curcontext=$curcontext state state_descr line ret=1
            local -A opt_args
            # For the helpers: words[1] becomes the command name below.
            local \#(helper)_program=${words[1]/#\~/$HOME}
            _arguments -C : \
        \#(leading)
                '1: :\#(helper)_commands' \
                '*:: :->argument' && ret=0
            if [[ $state == argument ]]; then
                curcontext=${curcontext%:*:*}:\#(tool)-${words[1]}:
                case ${words[1]} in
        \#(cases)
                esac
            fi
            return ret
        }
        """#
    }

    private func footer() -> String {
        #"""
        # Autoloaded from $fpath, this file is the body of \#(prefix): run the function it
        # just defined. Sourced, it registers the function with the completion system.
        if [[ ${zsh_eval_context[-1]} == loadautofunc ]]; then
            \#(prefix) "$@"
        else
            compdef \#(prefix) \#(tool)
        fi
        """#
    }

    /// `_arguments` spec text (help, messages): `\`, `:`, `[` and `]` are syntax there.
    private func escapeSpec(_ text: String) -> String {
        var out = ""
        for character in text {
            if "\\:[]".contains(character) { out.append("\\") }
            out.append(character)
        }
        return out
    }

    /// `_describe` splits name from description at the first unescaped colon.
    private func escapeDescribeName(_ name: String) -> String {
        name.replacingEach("\\", with: "\\\\").replacingEach(":", with: "\\:")
    }

    /// A word in a `(a b c)` action, which zsh splits like an array literal.
    private func escapeChoice(_ word: String) -> String {
        var out = ""
        for character in word {
            if " \t()\\:'\"$`".contains(character) { out.append("\\") }
            out.append(character)
        }
        return out
    }
}
