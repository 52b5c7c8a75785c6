import Foundation
import LFSyncSystem

/// Where output goes, and how much of it. Results go to stdout, everything
/// meant for a human watching (progress, notes) to stderr.
struct Console: Sendable {
    enum Verbosity: Int, Sendable { case quiet, normal, verbose }

    var verbosity: Verbosity
    /// True when stderr is a terminal and NO_COLOR is unset.
    var useColor: Bool
    var stderrIsTerminal: Bool
    /// stderr carries JSON lines only (`--progress json`): notes and errors go out as
    /// `{"event": "note" | "error", "message": …}`, so a program reading it never meets text.
    var jsonLines = false

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
        write(text, event: "note")
    }

    /// Errors are printed even with -q.
    func error(_ text: String) {
        write(text, event: "error")
    }

    func detail(_ text: String) {
        guard verbosity == .verbose else { return }
        write(text, event: "note")
    }

    private func write(_ text: String, event: String) {
        guard jsonLines else { return Self.writeError(text + "\n") }
        let object = ["event": event, "message": text, "time": JSONOutput.timestamp(Date())]
        Self.writeError(((try? JSONOutput.render(object, pretty: false)) ?? "{}") + "\n")
    }

    /// Flushes stdout first, so that results and notes appear in the order they were made.
    static func writeError(_ text: String) {
        fflush(nil)  // all output streams; naming `stdout` is not concurrency-safe in Swift 6
        FileHandle.standardError.write(Data(text.utf8))
    }
}

/// Sizes as people read them (the lower layers' messages use the same).
typealias ByteCountText = LFSyncSystem.ByteCountText
