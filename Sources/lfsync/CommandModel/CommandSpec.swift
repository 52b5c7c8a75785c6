/// The one description of the command line. Parsing, `--help`, the man page
/// and the shell completions are all generated from these values, so they
/// cannot disagree with each other.
struct CommandSpec: Sendable {
    var name: String
    var abstract: String
    var discussion: String = ""
    var options: [OptionSpec] = []
    var arguments: [ArgumentSpec] = []
    var examples: [String] = []
}

struct OptionSpec: Sendable {
    var long: String
    var short: Character? = nil
    /// nil for a flag; otherwise the placeholder shown in help (`DIR`, `PEER`).
    var valueName: String? = nil
    var help: String
    var completion: CompletionKind = .none
    /// For a typed `Option`: whether a value converts, and what a valid one looks
    /// like. The parser checks every value with it, so a bad value is a usage
    /// error before the command starts.
    var accepts: (@Sendable (String) -> Bool)? = nil
    var expected: String? = nil

    var isFlag: Bool { valueName == nil }
}

struct ArgumentSpec: Sendable {
    var name: String
    var help: String
    var isOptional: Bool = false
    var isRepeating: Bool = false
    var completion: CompletionKind = .none
}

/// What a shell should offer for a value.
enum CompletionKind: Sendable, Equatable {
    case none
    case file
    case directory
    case choices([String])
    /// A known peer name (completion scripts ask `lfsync __complete peers`).
    case peer
    /// A command name.
    case command
}
