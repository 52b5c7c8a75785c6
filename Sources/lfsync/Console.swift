import Foundation

/// Where output goes, and how much of it. Results go to stdout, everything
/// meant for a human watching (progress, notes) to stderr.
struct Console: Sendable {
    enum Verbosity: Int, Sendable { case quiet, normal, verbose }

    var verbosity: Verbosity
    /// True when stderr is a terminal and NO_COLOR is unset.
    var useColor: Bool
    var stderrIsTerminal: Bool

    init(arguments: ParsedArguments, environment: [String: String] = ProcessInfo.processInfo.environment) {
        verbosity = arguments[LFSyncCommands.quiet] ? .quiet : arguments[LFSyncCommands.verbose] ? .verbose : .normal
        stderrIsTerminal = isatty(STDERR_FILENO) == 1
        useColor = stderrIsTerminal && environment["NO_COLOR"].map(\.isEmpty) ?? true
    }

    func result(_ text: String) {
        print(text)
    }

    /// One line of a stream of results (`watch --json`): written now, not when the buffer
    /// fills, so a program reading the pipe or the file sees each event as it happens.
    func streamedResult(_ line: String) {
        print(line)
        fflush(nil)
    }

    func note(_ text: String) {
        guard verbosity != .quiet else { return }
        Self.writeError(text + "\n")
    }

    /// Errors are printed even with -q.
    func error(_ text: String) {
        Self.writeError(text + "\n")
    }

    func detail(_ text: String) {
        guard verbosity == .verbose else { return }
        Self.writeError(text + "\n")
    }

    /// Flushes stdout first, so that results and notes appear in the order they were made.
    static func writeError(_ text: String) {
        fflush(nil)  // all output streams; naming `stdout` is not concurrency-safe in Swift 6
        FileHandle.standardError.write(Data(text.utf8))
    }
}

enum ByteCountText {
    /// Decimal units, as Finder and most photo tools show sizes.
    static func format(_ bytes: UInt64) -> String {
        let units = ["B", "kB", "MB", "GB", "TB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1000, unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        return unit == 0 ? "\(bytes) B" : String(format: "%.1f %@", value, units[unit])
    }
}
