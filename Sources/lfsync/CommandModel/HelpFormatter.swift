import Foundation

/// Renders `--help` text from the command model, wrapped to `width` columns: a label too
/// long for its column (`--rescan-interval SECONDS`) gets a line of its own and its help
/// starts on the next, never cut or run into its help.
struct HelpFormatter {
    let model: CommandModel
    /// Columns of the help text (a terminal's usual 80).
    var width = 80
    /// Where an option's help starts.
    static let optionColumn = 28
    /// Where an argument's help starts.
    static let argumentColumn = 24

    func overview() -> String {
        var lines = ["\(model.toolName) — \(model.abstract)", "", "USAGE: \(model.toolName) <command> [options]", "", "COMMANDS:"]
        let column = (model.commands.map(\.name.count).max() ?? 0) + 4
        for command in model.commands {
            lines += labelled("  " + command.name, command.abstract, column: column)
        }
        lines += ["", "GLOBAL OPTIONS:"]
        lines += optionLines(model.globalOptions)
        lines += ["", "Run '\(model.toolName) help <command>' for a command's options."]
        return lines.joined(separator: "\n")
    }

    func help(for command: CommandSpec) -> String {
        var lines = Self.wrap("\(model.toolName) \(command.name) — \(command.abstract)", width: width, indent: 0) + ["", "USAGE: \(usage(command))"]
        if !command.discussion.isEmpty { lines += [""] + Self.wrap(command.discussion, width: width, indent: 0) }
        if !command.arguments.isEmpty {
            lines += ["", "ARGUMENTS:"]
            for argument in command.arguments {
                lines += labelled("  " + argument.name, argument.help, column: Self.argumentColumn)
            }
        }
        if !command.options.isEmpty {
            lines += ["", "OPTIONS:"]
            lines += optionLines(command.options)
        }
        if !command.examples.isEmpty {
            lines += ["", "EXAMPLES:"] + command.examples.map { "  " + $0 }
        }
        return lines.joined(separator: "\n")
    }

    func usage(_ command: CommandSpec) -> String {
        var parts = [model.toolName, command.name]
        if !command.options.isEmpty { parts.append("[options]") }
        for argument in command.arguments {
            let name = argument.isRepeating ? "\(argument.name)..." : argument.name
            parts.append(argument.isOptional ? "[\(name)]" : name)
        }
        return parts.joined(separator: " ")
    }

    static func label(_ option: OptionSpec) -> String {
        var label = option.short.map { "-\($0), " } ?? "    "
        label += "--\(option.long)"
        if let value = option.valueName { label += " \(value)" }
        return label
    }

    private func optionLines(_ options: [OptionSpec]) -> [String] {
        options.flatMap { labelled("  " + Self.label($0), $0.help, column: Self.optionColumn) }
    }

    /// `label`, then `help` from `column` on, wrapped with that hanging indent; the help
    /// starts on a line of its own when the label leaves it less than two spaces.
    private func labelled(_ label: String, _ help: String, column: Int) -> [String] {
        let body = Self.wrap(help, width: width, indent: column)
        guard let first = body.first else { return [label] }
        let start = first.dropFirst(column)
        if label.count + 2 <= column {
            return [label + String(repeating: " ", count: column - label.count) + start] + body.dropFirst()
        }
        return [label] + body
    }

    /// Words of `text` in lines of at most `width` columns, each line indented by `indent`
    /// spaces; a word longer than a line has one of its own. Blank lines are kept.
    static func wrap(_ text: String, width: Int, indent: Int) -> [String] {
        let margin = String(repeating: " ", count: indent)
        var lines: [String] = []
        for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var line = ""
            for word in paragraph.split(separator: " ") {
                if !line.isEmpty, indent + line.count + 1 + word.count > width {
                    lines.append(margin + line)
                    line = ""
                }
                line += line.isEmpty ? String(word) : " " + word
            }
            lines.append(line.isEmpty ? "" : margin + line)
        }
        return lines
    }
}
