/// The bash completion script: one function per command, registered with
/// `complete -F`. Written for bash 5 (negative array subscripts need at least
/// 4.3); uses bash-completion's `_filedir` for paths when it is loaded, since
/// that handles `~` and quoting better than plain `compgen`.
struct BashCompletionScript {
    let model: CommandModel

    private var tool: String { model.toolName }
    /// `_lfsync` and `_lfsync_<command>`; helpers live under `__lfsync_`, so
    /// no command name can collide with one (there is a `peers` command).
    private var prefix: String { "_" + ShellQuoting.identifier(model.toolName) }
    private var helper: String { "_" + prefix }

    func render() -> String {
        var parts = [header(), helpers()]
        parts += model.commands.map(commandFunction)
        parts.append(mainFunction())
        return parts.joined(separator: "\n\n") + "\n"
    }

    private func header() -> String {
        #"""
        # bash completion for \#(tool)                                -*- shell-script -*-
        # Generated from the command model by `\#(tool) __generate-docs`; do not edit.
        # Install as /usr/share/bash-completion/completions/\#(tool), or add
        # `source <(\#(tool) completions bash)` to ~/.bashrc.
        """#
    }

    private func helpers() -> String {
        let commands = model.commands.map(\.name).joined(separator: " ")
        return #"""
        # Rebuilds the command line as lfsync's parser sees it. Bash splits words at
        # COMP_WORDBREAKS characters, so `--address=nas.local:7878` arrives as five
        # words; words not separated by blanks in COMP_LINE are glued back into one.
        # Sets \#(helper)_words and \#(helper)_cword; without COMP_LINE (a caller
        # that set only COMP_WORDS), the words are taken as they are.
        \#(helper)_split() {
            local line=$COMP_LINE rest word i lost=0 glue
            \#(helper)_words=() \#(helper)_cword=0
            [[ -n $line ]] || lost=1
            for (( i = 0; i < ${#COMP_WORDS[@]}; i++ )); do
                word=${COMP_WORDS[i]} glue=0
                if (( lost == 0 )); then
                    rest=${line#"${line%%[![:space:]]*}"}
                    if [[ $rest == "$word"* ]]; then
                        (( i > 0 && ${#rest} == ${#line} )) && glue=1
                        line=${rest:${#word}}
                    else
                        lost=1
                    fi
                fi
                if (( glue )); then
                    \#(helper)_words[-1]+=$word
                else
                    \#(helper)_words+=("$word")
                fi
                (( i == COMP_CWORD )) && \#(helper)_cword=$(( ${#\#(helper)_words[@]} - 1 ))
            done
            return 0
        }

        # Offers the words of $2 that start with $1.
        \#(helper)_reply() {
            \#(helper)_text=$1
            local word
            local -a words
            read -ra words <<< "$2"
            for word in "${words[@]}"; do
                [[ $word == "$1"* ]] && COMPREPLY+=("$word")
            done
            return 0
        }

        \#(helper)_commands() {
            \#(helper)_reply "$1" \#(ShellQuoting.single(commands))
        }

        # Peer names, one per line from `\#(tool) __complete peers`; nothing if it fails.
        # Asks the program being completed, which need not be on PATH.
        \#(helper)_peers() {
            \#(helper)_text=$1
            local program=${\#(helper)_words[0]} output peer
            [[ $program == "~/"* ]] && program=$HOME/${program#"~/"}
            output=$("$program" __complete peers 2>/dev/null) || return 0
            while IFS= read -r peer; do
                [[ -n $peer && $peer == "$1"* ]] || continue
                printf -v peer '%q' "$peer"
                COMPREPLY+=("$peer")
            done <<< "$output"
            return 0
        }

        # Files, or directories with -d: bash-completion's _filedir when it is loaded
        # (it handles ~ and quoting), plain compgen otherwise.
        \#(helper)_files() {
            \#(helper)_text=$1
            compopt -o filenames 2>/dev/null
            if declare -F _filedir >/dev/null; then
                local cur=$1
                _filedir ${2:+"$2"}
            else
                mapfile -t COMPREPLY < <(compgen "${2:--f}" -- "$1")
            fi
            return 0
        }

        # Counts the arguments before the word being completed; $1 lists the options
        # that take a value (the word after one is its value, not an argument).
        # Sets \#(helper)_count, and \#(helper)_only_arguments once `--` was seen.
        \#(helper)_count_arguments() {
            local i word
            \#(helper)_count=0 \#(helper)_only_arguments=0
            for (( i = 2; i < \#(helper)_cword; i++ )); do
                word=${\#(helper)_words[i]}
                if (( \#(helper)_only_arguments )) || [[ $word == - || $word != -* ]]; then
                    \#(helper)_count=$(( \#(helper)_count + 1 ))
                elif [[ $word == -- ]]; then
                    \#(helper)_only_arguments=1
                elif [[ " $1 " == *" $word "* ]]; then
                    i=$(( i + 1 ))
                fi
            done
            return 0
        }

        # Bash replaces only what follows the last '=' or ':' of the word (when those
        # are in COMP_WORDBREAKS), so replies must not repeat what comes before it.
        \#(helper)_trim() {
            local breaks=${COMP_WORDBREAKS//[!=:]/} prefix i
            [[ -n $breaks && -n $\#(helper)_text ]] || return 0
            prefix=${\#(helper)_text%"${\#(helper)_text##*["$breaks"]}"}
            [[ -n $prefix ]] || return 0
            for i in "${!COMPREPLY[@]}"; do
                COMPREPLY[i]=${COMPREPLY[i]#"$prefix"}
            done
            return 0
        }
        """#
    }

    /// A command's completion: an option's value if the cursor is on one,
    /// else option names after `-`, else its positional arguments by position.
    private func commandFunction(_ command: CommandSpec) -> String {
        let options = model.allOptions(of: command)
        let valued = options.filter { !$0.isFlag }
        let offerOptions = "\(helper)_reply \"$cur\" " + ShellQuoting.single(options.flatMap(\.spellings).joined(separator: " "))
        var lines = ["\(prefix)_\(ShellQuoting.identifier(command.name))() {"]
        if valued.isEmpty {
            lines.append("    local cur=$1")
        } else {
            lines += [
                "    local cur=$1 prev=${\(helper)_words[\(helper)_cword-1]} option value",
                "    if [[ $cur == --*=* ]]; then",
                "        option=${cur%%=*} value=${cur#*=}",
                "    else",
                "        option=$prev value=$cur",
                "    fi",
                "    case $option in",
            ]
            for option in valued {
                let statement = completion(option.completion, of: "$value").map { "\($0); " } ?? ""
                lines.append("        \(option.spellings.joined(separator: "|"))) \(statement)return 0 ;;")
            }
            lines.append("    esac")
        }
        guard !command.arguments.isEmpty else {
            return (lines + ["    \(offerOptions)", "}"]).joined(separator: "\n")
        }
        lines += [
            "    \(helper)_count_arguments \(ShellQuoting.single(valued.flatMap(\.spellings).joined(separator: " ")))",
            "    if (( \(helper)_only_arguments == 0 )) && [[ $cur == -* ]]; then",
            "        \(offerOptions)",
            "        return 0",
            "    fi",
            "    case $\(helper)_count in",
        ]
        var coversEveryPosition = false
        for (index, argument) in command.arguments.enumerated() {
            let pattern = argument.isRepeating ? "*" : String(index)
            lines.append("        \(pattern)) \(completion(argument.completion, of: "$cur") ?? ":") ;;")
            if argument.isRepeating { coversEveryPosition = true; break }
        }
        if !coversEveryPosition {
            // No argument left to give: the options are all there is to offer.
            lines.append("        *) \(offerOptions) ;;")
        }
        lines += ["    esac", "    return 0", "}"]
        return lines.joined(separator: "\n")
    }

    /// The command that completes `word` (a shell expression) as `kind`;
    /// nil when nothing can be offered (free text such as a name).
    private func completion(_ kind: CompletionKind, of word: String) -> String? {
        switch kind {
        case .none: nil
        case .file: "\(helper)_files \"\(word)\""
        case .directory: "\(helper)_files \"\(word)\" -d"
        case let .choices(choices): "\(helper)_reply \"\(word)\" \(ShellQuoting.single(choices.joined(separator: " ")))"
        case .peer: "\(helper)_peers \"\(word)\""
        case .command: "\(helper)_commands \"\(word)\""
        }
    }

    private func mainFunction() -> String {
        let leading = ShellQuoting.single(model.leadingOptions.flatMap(\.spellings).joined(separator: " "))
        let cases = model.commands.map { command in
            "            \(command.name)) \(prefix)_\(ShellQuoting.identifier(command.name)) \"$cur\" ;;"
        }.joined(separator: "\n")
        return #"""
        \#(prefix)() {
            local \#(helper)_cword \#(helper)_text= \#(helper)_count \#(helper)_only_arguments cur
            local -a \#(helper)_words
            COMPREPLY=()
            \#(helper)_split
            cur=${\#(helper)_words[\#(helper)_cword]}
            if (( \#(helper)_cword == 1 )); then
                if [[ $cur == -* ]]; then
                    \#(helper)_reply "$cur" \#(leading)
                else
                    \#(helper)_commands "$cur"
                fi
            else
                case ${\#(helper)_words[1]} in
        \#(cases)
                esac
            fi
            \#(helper)_trim
            return 0
        }

        complete -F \#(prefix) \#(tool)
        """#
    }
}
