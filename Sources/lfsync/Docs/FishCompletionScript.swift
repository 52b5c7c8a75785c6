/// The fish completion script: `complete -c lfsync` lines whose conditions
/// select the command (`__fish_use_subcommand` for the first word, the command
/// word itself after that) and, for arguments, their position.
struct FishCompletionScript {
    let model: CommandModel

    private var tool: String { model.toolName }
    private var prefix: String { "__fish_" + ShellQuoting.identifier(model.toolName) }

    func render() -> String {
        var parts = [header(), helpers(), topLevel()]
        parts += model.commands.map(commandLines)
        return parts.joined(separator: "\n\n") + "\n"
    }

    private func header() -> String {
        #"""
        # fish completion for \#(tool). Generated from the command model by
        # `\#(tool) __generate-docs`; do not edit.
        # Install as ~/.config/fish/completions/\#(tool).fish (or in
        # /usr/share/fish/vendor_completions.d/).
        """#
    }

    private func helpers() -> String {
        let described = model.commands.map { command in
            "    printf '%s\\t%s\\n' \(ShellQuoting.fishSingle(command.name)) \(ShellQuoting.fishSingle(command.abstract))"
        }.joined(separator: "\n")
        return #"""
        # The command is always the second word: lfsync accepts nothing else before it.
        # (__fish_seen_subcommand_from would also match `lfsync help push`.)
        function \#(prefix)_command_is --argument-names name
            set -l tokens (commandline -opc)
            test (count $tokens) -ge 2; and test "$tokens[2]" = $name
        end

        # True when the word being completed is argument number $index of command
        # $name; "2+" means argument 2 or any after it. The remaining arguments are
        # the command's options that take a value: the word after one is its value.
        function \#(prefix)_argument_is --argument-names name index
            set -l tokens (commandline -opc)
            test (count $tokens) -ge 2; and test "$tokens[2]" = $name; or return 1
            set -l valued $argv[3..-1]
            set -l count 0
            set -l skip 0
            set -l only_arguments 0
            for token in $tokens[3..-1]
                if test $skip -eq 1
                    set skip 0
                else if test $only_arguments -eq 0; and test "$token" = --
                    set only_arguments 1
                else if test $only_arguments -eq 0; and string match -q -- '-?*' $token
                    contains -- $token $valued; and set skip 1
                else
                    set count (math $count + 1)
                end
            end
            # After an option that takes a value, or on an option name: not an argument.
            test $skip -eq 0; or return 1
            if test $only_arguments -eq 0; and string match -q -- '-*' (commandline -ct)
                return 1
            end
            set -l position (string replace '+' '' -- $index)
            if string match -q -- '*+' $index
                test $count -ge (math $position - 1)
            else
                test $count -eq (math $position - 1)
            end
        end

        # Command names with their abstracts, for the first word and for `help`.
        function \#(prefix)_commands
        \#(described)
        end

        # Peer names, one per line from `\#(tool) __complete peers`; nothing if it fails.
        # Asks the program being completed, which need not be on PATH.
        function \#(prefix)_peers
            set -l program (commandline -opc)[1]
            set program (string replace -r '^~/' "$HOME/" -- $program)
            set -l peers (command $program __complete peers 2>/dev/null); or return 0
            printf '%s\n' $peers
        end
        """#
    }

    private func topLevel() -> String {
        var lines = [
            "# Files only where a value or argument is a file: see the lines with -F.",
            "complete -c \(tool) -f",
            "complete -c \(tool) -n __fish_use_subcommand -a '(\(prefix)_commands)'",
        ]
        for option in model.leadingOptions {
            lines.append("complete -c \(tool) -n __fish_use_subcommand \(names(option)) -d \(ShellQuoting.fishSingle(option.help))")
        }
        return lines.joined(separator: "\n")
    }

    private func commandLines(_ command: CommandSpec) -> String {
        let condition = ShellQuoting.fishSingle("\(prefix)_command_is \(command.name)")
        var lines = ["# \(tool) \(command.name)"]
        let options = model.allOptions(of: command)
        for option in options {
            var line = "complete -c \(tool) -n \(condition) \(names(option))"
            if !option.isFlag { line += " " + valueCompletion(option.completion) }
            lines.append(line + " -d \(ShellQuoting.fishSingle(option.help))")
        }
        let valued = options.filter { !$0.isFlag }.flatMap(\.spellings).joined(separator: " ")
        for (index, argument) in command.arguments.enumerated() {
            guard argument.completion != .none else { continue }
            let position = argument.isRepeating ? "\(index + 1)+" : "\(index + 1)"
            let test = ["\(prefix)_argument_is", command.name, position, valued].filter { !$0.isEmpty }.joined(separator: " ")
            lines.append("complete -c \(tool) -n \(ShellQuoting.fishSingle(test)) \(argumentCompletion(argument.completion)) -d \(ShellQuoting.fishSingle(argument.help))")
            if argument.isRepeating { break }
        }
        return lines.joined(separator: "\n")
    }

    private func names(_ option: OptionSpec) -> String {
        (option.short.map { "-s \($0) " } ?? "") + "-l \(option.long)"
    }

    /// Flags for an option's value: `-r` (the value is required) plus what to offer.
    private func valueCompletion(_ kind: CompletionKind) -> String {
        switch kind {
        case .none: "-x"
        case .file: "-r -F"
        default: "-x " + argumentCompletion(kind)
        }
    }

    private func argumentCompletion(_ kind: CompletionKind) -> String {
        switch kind {
        case .none: ""
        case .file: "-F"
        case .directory: "-a '(__fish_complete_directories)'"
        case let .choices(choices): "-a " + ShellQuoting.fishSingle(choices.joined(separator: " "))
        case .peer: "-a '(\(prefix)_peers)'"
        case .command: "-a '(\(prefix)_commands)'"
        }
    }
}
