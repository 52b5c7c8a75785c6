import Foundation
import Testing

/// Runs the real `lfsync` binary, as a user or a cron job would.
struct LFSyncProcess {
    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// `$LFSYNC_BINARY` (set by `make test`), else the debug build next to the sources.
    static var binary: URL {
        if let path = ProcessInfo.processInfo.environment["LFSYNC_BINARY"], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        return TestSupport.packageRoot.appendingPathComponent(".build/debug/lfsync")
    }

    /// Runs `lfsync` to completion on a Dispatch thread: waiting for a child process blocks,
    /// and a blocked cooperative thread (there are two on this machine) would stall every
    /// other test's tasks meanwhile, handshake timers included.
    /// - Parameter openFileLimit: run under `ulimit -n` of this many descriptors, as a
    ///   user's shell would have it (1024 is the usual default, tests go lower).
    /// - Parameter timeLimit: seconds after which `timeout(1)` stops it with SIGTERM (exit
    ///   124), for a command that should end at once but would otherwise run forever (`serve`).
    static func run(_ arguments: [String], home: URL, environment extra: [String: String] = [:], openFileLimit: Int? = nil,
                    timeLimit: Int? = nil) async throws -> Output {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result {
                    try runBlocking(arguments, home: home, environment: extra, openFileLimit: openFileLimit, timeLimit: timeLimit)
                })
            }
        }
    }

    /// Runs `lfsync` to completion like `run`, calling `onErrorLine` with each line it writes
    /// to stderr as it writes it (on the reading thread): a test acts at a moment the command
    /// announces ("asking liar about 12 assets"), not after a guessed delay.
    static func run(_ arguments: [String], home: URL, onErrorLine: @escaping @Sendable (String) -> Void) async throws -> Output {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result {
                    let process = Process()
                    (process.executableURL, process.arguments) = (binary, arguments)
                    var environment = ProcessInfo.processInfo.environment
                    environment["LFSYNC_HOME"] = home.path
                    environment["NO_COLOR"] = "1"
                    process.environment = environment
                    let out = Pipe(), err = Pipe()
                    (process.standardOutput, process.standardError) = (out, err)
                    try process.run()
                    let stdout = LockedBox(Data())
                    let reader = DispatchGroup()
                    reader.enter()
                    DispatchQueue.global().async {
                        stdout.value = out.fileHandleForReading.readDataToEndOfFile()
                        reader.leave()
                    }
                    var stderr = Data(), line = Data()
                    while true {
                        let byte = err.fileHandleForReading.readData(ofLength: 1)
                        if byte.isEmpty { break }
                        stderr.append(byte)
                        if byte == Data("\n".utf8) {
                            onErrorLine(String(decoding: line, as: UTF8.self))
                            line = Data()
                        } else {
                            line.append(byte)
                        }
                    }
                    reader.wait()
                    process.waitUntilExit()
                    return Output(status: process.terminationStatus, stdout: String(decoding: stdout.value, as: UTF8.self),
                                  stderr: String(decoding: stderr, as: UTF8.self))
                })
            }
        }
    }

    /// A value two threads hand over (the other's reads wait for the DispatchGroup).
    private final class LockedBox<Value>: @unchecked Sendable {
        var value: Value
        init(_ value: Value) { self.value = value }
    }

    /// Runs a `/bin/sh -c` command line (a `cp -r`, as a user would copy a card in) off the
    /// cooperative pool; returns its exit status.
    static func shell(_ command: String) async throws -> Int32 {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result {
                    let process = Process()
                    (process.executableURL, process.arguments) = (URL(fileURLWithPath: "/bin/sh"), ["-c", command])
                    try process.run()
                    process.waitUntilExit()
                    return process.terminationStatus
                })
            }
        }
    }

    /// The executable and arguments that run `lfsync arguments`, under `ulimit -n limit`
    /// and `umask mask` (octal, like the shell's) when given.
    static func command(_ arguments: [String], openFileLimit: Int?, umask: String? = nil) -> (URL, [String]) {
        var setUp: [String] = []
        if let limit = openFileLimit { setUp.append("ulimit -n \(limit)") }
        if let umask { setUp.append("umask \(umask)") }
        guard !setUp.isEmpty else { return (binary, arguments) }
        return (URL(fileURLWithPath: "/bin/sh"), ["-c", (setUp + ["exec \"$0\" \"$@\""]).joined(separator: " && "), binary.path] + arguments)
    }

    private static func runBlocking(_ arguments: [String], home: URL, environment extra: [String: String], openFileLimit: Int?,
                                    timeLimit: Int?) throws -> Output {
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            Issue.record("lfsync binary not found at \(binary.path): run the tests through `make test` (it builds it first)")
            return Output(status: -1, stdout: "", stderr: "")
        }
        let process = Process()
        var (executable, commandArguments) = command(arguments, openFileLimit: openFileLimit)
        if let timeLimit {
            (executable, commandArguments) = (URL(fileURLWithPath: "/usr/bin/timeout"), ["\(timeLimit)", executable.path] + commandArguments)
        }
        (process.executableURL, process.arguments) = (executable, commandArguments)
        var environment = ProcessInfo.processInfo.environment
        environment["LFSYNC_HOME"] = home.path
        environment["NO_COLOR"] = "1"
        environment.merge(extra) { _, new in new }
        process.environment = environment
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Read before waiting, so a large output cannot fill the pipe and stall the child.
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Output(status: process.terminationStatus,
                      stdout: String(decoding: stdout, as: UTF8.self),
                      stderr: String(decoding: stderr, as: UTF8.self))
    }
}
