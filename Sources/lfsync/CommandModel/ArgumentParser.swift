/// Parses `argv` against the command model. Knows nothing about what the
/// commands do; it only enforces their shape.
struct ArgumentParser {
    let model: CommandModel

    enum Outcome {
        case run(CommandSpec, ParsedArguments)
        case help(CommandSpec?)
        case version
    }

    func parse(_ arguments: [String]) throws(UsageError) -> Outcome {
        // Global options may come before the command too (`lfsync -v status`), as git takes them.
        var arguments = arguments
        var leading: [String] = []
        while let first = arguments.first, first.hasPrefix("-"), first != "-h", first != "--help",
              let option = model.globalOptions.first(where: { "--\($0.long)" == first || $0.short.map { "-\($0)" } == first }),
              option.isFlag {
            leading.append(option.long)
            arguments.removeFirst()
        }
        guard let first = arguments.first else { return .help(nil) }
        switch first {
        case "-h", "--help": return .help(nil)
        case "--version": return .version
        default: break
        }
        guard let command = model.command(named: first) else {
            if first.hasPrefix("-") {
                throw UsageError(message: "unknown option '\(first)'", hint: "Run 'lfsync help' for the list of commands.")
            }
            let suggestion = model.closestCommand(to: first).map { " Did you mean '\($0)'?" } ?? ""
            throw UsageError(message: "unknown command '\(first)'.\(suggestion)", hint: "Run 'lfsync help' for the list of commands.")
        }
        let rest = Array(arguments.dropFirst())
        if rest.contains("-h") || rest.contains("--help") { return .help(command) }
        var parsed = try parse(rest, for: command)
        for flag in leading { parsed.flags.insert(flag) }
        return .run(command, parsed)
    }

    func parse(_ arguments: [String], for command: CommandSpec) throws(UsageError) -> ParsedArguments {
        var parsed = ParsedArguments(command: command.name)
        let hint = "Run 'lfsync \(command.name) --help' for usage."
        var index = 0
        var onlyPositionals = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyPositionals || argument == "-" || !argument.hasPrefix("-") {
                parsed.positionals.append(argument)
                continue
            }
            if argument == "--" {
                onlyPositionals = true
                continue
            }
            var name = argument
            var inlineValue: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            guard let option = model.option(matching: name, in: command) else {
                throw UsageError(message: "unknown option '\(name)' for '\(command.name)'", hint: hint)
            }
            if option.isFlag {
                guard inlineValue == nil else {
                    throw UsageError(message: "option '--\(option.long)' takes no value", hint: hint)
                }
                parsed.flags.insert(option.long)
                continue
            }
            let value: String
            if let inlineValue {
                value = inlineValue
            } else if index < arguments.count {
                value = arguments[index]
                index += 1
            } else {
                throw UsageError(message: "option '--\(option.long)' needs a value (\(option.valueName ?? "VALUE"))", hint: hint)
            }
            if case let .choices(choices) = option.completion, !choices.contains(value) {
                throw UsageError(message: "'\(value)' is not a valid value for '--\(option.long)' (one of: \(choices.joined(separator: ", ")))", hint: hint)
            }
            if let accepts = option.accepts, !accepts(value) {
                throw UsageError(message: "'\(value)' is not a valid value for '--\(option.long)': expected \(option.expected ?? option.valueName ?? "a value")", hint: hint)
            }
            parsed.values[option.long, default: []].append(value)
        }
        try checkPositionals(parsed.positionals, for: command, hint: hint)
        return parsed
    }

    private func checkPositionals(_ positionals: [String], for command: CommandSpec, hint: String) throws(UsageError) {
        let required = command.arguments.filter { !$0.isOptional }
        if positionals.count < required.count {
            let missing = required[positionals.count]
            throw UsageError(message: "missing argument \(missing.name)", hint: hint)
        }
        let repeats = command.arguments.last?.isRepeating ?? false
        if !repeats, positionals.count > command.arguments.count {
            throw UsageError(message: "unexpected argument '\(positionals[command.arguments.count])'", hint: hint)
        }
    }
}
