/// The shells `lfsync completions` writes scripts for.
enum Shell: String, CaseIterable, Sendable {
    case bash, zsh, fish

    /// Where `__generate-docs` writes the script, relative to the output
    /// directory; each name is what that shell's completion loader looks for.
    var scriptPath: String {
        switch self {
        case .bash: "completions/lfsync.bash"
        case .zsh: "completions/_lfsync"
        case .fish: "completions/lfsync.fish"
        }
    }
}
