import Foundation

/// Renders `--help` text from the command model.
struct HelpFormatter {
    let model: CommandModel

    func overview() -> String {
        var lines = ["\(model.toolName) — \(model.abstract)", "", "USAGE: \(model.toolName) <command> [options]", "", "COMMANDS:"]
        let width = (model.commands.map(\.name.count).max() ?? 0) + 2
        for command in model.commands {
            lines.append("  " + command.name.padding(toLength: width, withPad: " ", startingAt: 0) + command.abstract)
        }
        lines += ["", "GLOBAL OPTIONS:"]
        lines += optionLines(model.globalOptions)
        lines += ["", "Run '\(model.toolName) help <command>' for a command's options."]
        return lines.joined(separator: "\n")
    }

    func help(for command: CommandSpec) -> String {
        var lines = ["\(model.toolName) \(command.name) — \(command.abstract)", "", "USAGE: \(usage(command))"]
        if !command.discussion.isEmpty { lines += ["", command.discussion] }
        if !command.arguments.isEmpty {
            lines += ["", "ARGUMENTS:"]
            for argument in command.arguments {
                lines.append("  " + argument.name.padding(toLength: 22, withPad: " ", startingAt: 0) + argument.help)
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
        options.map { "  " + Self.label($0).padding(toLength: 26, withPad: " ", startingAt: 0) + $0.help }
    }
}
