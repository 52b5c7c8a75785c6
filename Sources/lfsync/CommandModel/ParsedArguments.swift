/// The result of parsing one command's arguments against its spec. Commands
/// read options through their typed `Flag`s and `Option`s (TypedOption.swift),
/// never by a name string.
struct ParsedArguments: Sendable {
    /// The command these arguments were given to, for error messages.
    var command: String = ""
    var flags: Set<String> = []
    var values: [String: [String]] = [:]
    var positionals: [String] = []
}
