/// The whole command line: global options plus every command.
struct CommandModel: Sendable {
    var toolName: String
    var abstract: String
    var globalOptions: [OptionSpec]
    var commands: [CommandSpec]

    func command(named name: String) -> CommandSpec? {
        commands.first { $0.name == name }
    }

    func option(matching argument: String, in command: CommandSpec) -> OptionSpec? {
        let candidates = command.options + globalOptions
        if argument.hasPrefix("--") {
            let long = argument.dropFirst(2)
            return candidates.first { $0.long == long }
        }
        guard argument.count == 2, let short = argument.last else { return nil }
        return candidates.first { $0.short == short }
    }

    /// The command within edit distance 2, for "did you mean".
    func closestCommand(to typo: String) -> String? {
        commands.map(\.name)
            .map { ($0, EditDistance.between($0, typo)) }
            .filter { $0.1 <= 2 }
            .min { $0.1 < $1.1 }?.0
    }
}

/// Edits between two words, a swap of two neighbouring letters counting as one (the
/// optimal-string-alignment distance): `scna` is one edit from `scan`, two from `sync`.
enum EditDistance {
    static func between(_ lhs: String, _ rhs: String) -> Int {
        let a = Array(lhs), b = Array(rhs)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var beforePrevious = Array(0...b.count)
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], beforePrevious[j - 2] + 1)
                }
            }
            beforePrevious = previous
            previous = current
        }
        return previous[b.count]
    }
}
