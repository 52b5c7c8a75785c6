/// The result of parsing one command's arguments against its spec.
struct ParsedArguments: Sendable {
    var flags: Set<String> = []
    var values: [String: [String]] = [:]
    var positionals: [String] = []

    func flag(_ long: String) -> Bool { flags.contains(long) }
    func value(_ long: String) -> String? { values[long]?.last }
}
