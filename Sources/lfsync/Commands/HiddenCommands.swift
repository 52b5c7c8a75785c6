import Foundation

/// Commands the completion scripts call; not listed in help or the man page.
enum HiddenCommands {
    /// `lfsync __complete peers`: one trusted peer name per line. Silent on any error
    /// (a completion must never print noise into the user's prompt).
    static func complete(_ arguments: [String]) -> ExitCode {
        guard arguments.first == "peers", let config = try? DeviceConfig.load(from: StateHome().configURL) else { return .success }
        for peer in config.peers { print(peer.name) }
        return .success
    }
}
