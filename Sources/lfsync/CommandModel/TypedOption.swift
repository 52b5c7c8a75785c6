/// A flag as a command declares it. The same value goes into the command's
/// spec (so the parser, `--help`, the man page and the completions know it)
/// and is what the command reads it by: a command cannot read an option it
/// did not declare, nor misspell one.
struct Flag: Sendable {
    let spec: OptionSpec

    init(_ long: String, short: Character? = nil, help: String) {
        spec = OptionSpec(long: long, short: short, help: help)
    }
}

/// An option that takes a value, converted to the type the command uses. A
/// value that does not convert is a usage error naming the option (exit 64),
/// raised by the parser before the command does anything.
struct Option<Value: Sendable>: Sendable {
    /// Carries `expected` (what a valid value looks like) for the parser's message.
    let spec: OptionSpec
    private let convert: @Sendable (String) -> Value?

    init(_ long: String, valueName: String, help: String, completion: CompletionKind = .none,
         expected: String, convert: @escaping @Sendable (String) -> Value?) {
        spec = OptionSpec(long: long, valueName: valueName, help: help, completion: completion,
                          accepts: { convert($0) != nil }, expected: expected)
        self.convert = convert
    }

    func value(from text: String, command: String) throws(UsageError) -> Value {
        guard let value = convert(text) else {
            throw UsageError(message: "'\(text)' is not a valid value for '--\(spec.long)': expected \(spec.expected ?? spec.valueName ?? "a value")",
                             hint: "Run 'lfsync \(command) --help' for usage.")
        }
        return value
    }
}

extension Option where Value == String {
    /// A value used as given (a path, a name, an address checked later against its own rules).
    init(_ long: String, valueName: String, help: String, completion: CompletionKind = .none) {
        self.init(long, valueName: valueName, help: help, completion: completion, expected: valueName) { $0 }
    }
}

extension Option where Value: RawRepresentable & CaseIterable & Sendable, Value.RawValue == String {
    /// One of a fixed set of words; the completions offer exactly them.
    init(_ long: String, valueName: String, help: String) {
        let choices = Value.allCases.map(\.rawValue)
        self.init(long, valueName: valueName, help: help, completion: .choices(choices),
                  expected: "one of \(choices.joined(separator: ", "))") { Value(rawValue: $0) }
    }
}

extension ParsedArguments {
    subscript(_ flag: Flag) -> Bool {
        flags.contains(flag.spec.long)
    }

    /// The option's value (the last, when given more than once), or nil when absent.
    func value<Value>(_ option: Option<Value>) throws(UsageError) -> Value? {
        guard let text = values[option.spec.long]?.last else { return nil }
        return try option.value(from: text, command: command)
    }

    /// Every value given for a repeatable option, in order.
    func values<Value>(_ option: Option<Value>) throws(UsageError) -> [Value] {
        var result: [Value] = []
        for text in values[option.spec.long] ?? [] {
            result.append(try option.value(from: text, command: command))
        }
        return result
    }
}
