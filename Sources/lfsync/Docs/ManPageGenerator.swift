/// Renders `man/lfsync.1` (man(7) macros) from the command model, so the
/// manual documents exactly the commands and options the parser accepts.
///
/// The sections the model cannot know (exit status, environment, files) are
/// written here, next to the code they describe, and the exit codes come from
/// `ExitCode` itself so a renumbering cannot leave the manual behind.
struct ManPageGenerator {
    let model: CommandModel

    /// The date printed on the checked-in page. A constant rather than today's
    /// date, so regenerating an unchanged model gives an identical file (the
    /// drift test compares bytes); bump it when the command line changes.
    static let manualDate = "2026-12-04"

    /// - Parameter date: the page's date (`YYYY-MM-DD`); nil leaves it blank.
    ///   Never today's date implicitly: the output must be reproducible.
    func render(date: String?) -> String {
        var lines = [
            ".\\\" Generated from the command model (Sources/lfsync/CommandModel/) by",
            ".\\\" `\(model.toolName) __generate-docs`. Edit the model, not this file.",
            ".TH \(Roff.argument(Roff.literal(model.toolName.uppercased()))) 1 \(Roff.argument(date.map(Roff.prose) ?? "")) "
                + "\(Roff.argument(Roff.literal(model.toolName))) \"User Commands\"",
        ]
        lines += name() + synopsis() + description() + commands() + globalOptions() + topics()
        lines += exitStatus() + environment() + files() + seeAlso()
        return lines.joined(separator: "\n") + "\n"
    }

    private var tool: String { Roff.literal(model.toolName) }

    private func name() -> [String] {
        [".SH NAME", Roff.line("\(tool) \\- \(Roff.prose(model.abstract))")]
    }

    private func synopsis() -> [String] {
        // No-fill, one usage per line: a synopsis reads as a list of shapes, not prose.
        [".SH SYNOPSIS", ".nf"] + model.commands.map(usage) + [".fi"]
    }

    private func description() -> [String] {
        let bold = Roff.bold(tool)
        return [
            ".SH DESCRIPTION",
            "\(bold) sends photos, videos and other files between your own devices, directly and without a server.",
            "It groups Live Photo pairs, RAW+JPEG pairs and sidecars into assets, and sends each peer only the chunks it lacks.",
            "Devices trust each other by Device ID, and find each other on the local network over DNS-SD or by address.",
            ".PP",
            "Results go to standard output; progress, notes and errors go to standard error, so output can be piped.",
            "Commands that take \(Roff.bold("\\-\\-json")) print machine-readable JSON with stable keys instead of text.",
            "Progress is shown per peer when standard error is a terminal, and never otherwise.",
            ".PP",
            "\(Roff.bold("\(tool) help")) \(Roff.italic("command")) and \(Roff.bold("\(tool)")) \(Roff.italic("command")) \(Roff.bold("\\-\\-help")) print a command's section of this manual.",
        ]
    }

    private func commands() -> [String] {
        var lines = [".SH COMMANDS"]
        for command in model.commands {
            lines += [".SS \(Roff.argument(Roff.literal(command.name)))", usage(command), ".PP", Roff.line(Roff.prose(sentence(command.abstract)))]
            if !command.discussion.isEmpty {
                lines += [".PP"] + Roff.paragraphs(command.discussion)
            }
            for argument in command.arguments {
                lines += [".TP", Roff.italic(Roff.literal(argument.name))] + Roff.paragraphs(argument.help)
            }
            for option in command.options {
                lines += item(option)
            }
            if !command.examples.isEmpty {
                lines += [".PP", command.examples.count == 1 ? "Example:" : "Examples:", ".RS 4", ".nf"]
                lines += command.examples.map { Roff.line(Roff.literal($0)) }
                lines += [".fi", ".RE"]
            }
        }
        return lines
    }

    private func globalOptions() -> [String] {
        [".SH GLOBAL OPTIONS", "Every command accepts these options."] + model.globalOptions.flatMap(item)
    }

    /// Every code `ExitCode` defines, in the words a script author needs.
    static let exitStatuses: [(code: ExitCode, meaning: String)] = [
        (.success, "Success: everything asked for was done."),
        (.partial, "Partial failure: some assets or peers failed and the rest succeeded (or, for verify, a file is corrupt)."),
        (.usage, "Usage error: an unknown command or option, a missing or malformed argument."),
        (.dataError, "Malformed data, such as a corrupt state file."),
        (.peerUnavailable, "A peer could not be reached."),
        (.software, "An internal error."),
        (.ioError, "An input/output error, such as a full disk."),
        (.temporaryFailure, "Temporary failure; try again later: another run holds the lock, or a timeout passed."),
        (.declined, "A peer declined the connection or the offer."),
    ]

    private func exitStatus() -> [String] {
        var lines = [".SH EXIT STATUS", "The codes follow \\fBsysexits\\fR(3), so scripts and cron jobs can tell a failure to retry from one to fix."]
        for status in Self.exitStatuses {
            lines += [".TP", Roff.bold(String(status.code.rawValue)), Roff.line(Roff.prose(status.meaning))]
        }
        return lines
    }

    private func environment() -> [String] {
        [
            ".SH ENVIRONMENT",
            ".TP", Roff.bold("LFSYNC_HOME"),
            "The state directory.",
            "When set, it is used as is.",
            ".TP", Roff.bold("XDG_DATA_HOME"),
            "When \(Roff.bold("LFSYNC_HOME")) is unset, the state directory is \(Roff.italic("$XDG_DATA_HOME/\(tool)")), or \(Roff.italic("~/.local/share/\(tool)")) when this is unset too.",
            ".TP", Roff.bold("NO_COLOR"),
            "When set to a non-empty value, output is never coloured.",
        ]
    }

    /// The state directory's contents, as `StateHome` lays them out.
    private func files() -> [String] {
        let home = "~/.local/share/\(tool)"
        let entries: [(String, String)] = [
            ("", "The default state directory; see \(Roff.bold("ENVIRONMENT")) for where it is otherwise."),
            ("identity.key", "This device's private key (mode 0600), from which its Device ID is derived."),
            ("config.json", "This device's name and the devices it trusts, with their addresses, whether their offers are auto-accepted and whether they may pull (mode 0600, replaced whole so a crash never leaves it half-written)."),
            ("ledger.sqlite", "What was offered to and confirmed by each peer, as \(Roff.bold("\(tool) status")) shows it."),
            ("lock", "Held by \(Roff.bold("\\-\\-batch")) runs and by each push of \(Roff.bold("watch")), so that overlapping runs do not collide (exit 75)."),
            ("libraries/", "One index per library folder (scan cache and chunk index), named after the folder's real path, so that scanning a folder never writes into it."),
        ]
        return [".SH FILES"] + entries.flatMap { name, meaning in
            [".TP", Roff.italic("\(home)/\(Roff.literal(name))"), meaning]
        }
    }

    private func seeAlso() -> [String] {
        [".SH SEE ALSO", ".BR avahi\\-daemon (8),", ".BR cron (8)"]
    }

    // MARK: - Pieces

    /// The usage line, built by the same rules as `HelpFormatter.usage`.
    private func usage(_ command: CommandSpec) -> String {
        var parts = [Roff.bold("\(tool) \(Roff.literal(command.name))")]
        if !command.options.isEmpty { parts.append("[\(Roff.italic("options"))]") }
        for argument in command.arguments {
            var name = Roff.italic(Roff.literal(argument.name))
            if argument.isRepeating { name += "..." }
            parts.append(argument.isOptional ? "[\(name)]" : name)
        }
        return Roff.line(parts.joined(separator: " "))
    }

    private func item(_ option: OptionSpec) -> [String] {
        var names = option.short.map { Roff.bold(Roff.literal("-\($0)")) + ", " } ?? ""
        names += Roff.bold(Roff.literal("--\(option.long)"))
        if let value = option.valueName { names += " " + Roff.italic(Roff.literal(value)) }
        return [".TP", names] + Roff.paragraphs(option.help)
    }

    /// Abstracts are written as headlines; in running text they end with a full stop.
    private func sentence(_ text: String) -> String {
        guard let last = text.last, !".!?".contains(last) else { return text }
        return text + "."
    }
}
