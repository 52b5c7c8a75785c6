/// sysexits-style exit codes a script can rely on (ARCHITECTURE.md, "Command line").
enum ExitCode: Int32 {
    case success = 0
    /// Some assets or peers failed; the rest succeeded.
    case partial = 1
    case usage = 64
    /// Input data was malformed (e.g. a corrupt state file).
    case dataError = 65
    case peerUnavailable = 69
    case software = 70
    case ioError = 74
    /// Try again later: a lock is held, a timeout passed.
    case temporaryFailure = 75
    case declined = 77
    /// Stopped by Ctrl-C (SIGINT), 128 + 2 as shells report it; what was confirmed stays.
    case interrupted = 130
    /// Stopped by SIGTERM, 128 + 15.
    case terminated = 143
}

/// An error that already knows how to end the process.
struct CommandFailure: Error {
    var message: String
    var exitCode: ExitCode
}
