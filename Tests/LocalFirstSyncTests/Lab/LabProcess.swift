import Foundation

/// Process plumbing shared by the lab tests (discovery lab and multi-device lab).
enum LabProcess {
    /// `LFSYNC_REQUIRE_LAB=1`: a machine that must run the labs records a missing
    /// prerequisite as a failure instead of skipping.
    static var isRequired: Bool {
        ProcessInfo.processInfo.environment["LFSYNC_REQUIRE_LAB"] == "1"
    }

    /// Whether a lab test should run; prints why not (`label` names the lab).
    static func shouldRun(missingPrerequisite: String?, label: String) -> Bool {
        guard let reason = missingPrerequisite else { return true }
        if isRequired { return true }  // the test itself records the reason as a failure
        print("\(label) skipped: \(reason)")
        return false
    }

    /// A built executable: `$environment`, else next to the running test binary
    /// (SwiftPM puts executables and the test bundle in the same directory),
    /// else the debug build.
    static func binary(_ name: String, environment: String) -> URL {
        if let path = ProcessInfo.processInfo.environment[environment], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            let sibling = URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: sibling.path) { return sibling }
        }
        return TestSupport.packageRoot.appendingPathComponent(".build/debug/\(name)")
    }

    /// Runs a lab script without blocking a cooperative thread: the continuation
    /// resumes from the process's termination handler. Output goes to a log file,
    /// returned whole, so a long run cannot fill a pipe.
    static func runScript(interpreter: String, arguments: [String], logName: String) async throws -> (status: Int32, output: String) {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("\(logName)-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: log) }
        let handle = try FileHandle(forWritingTo: log)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: interpreter)
        process.arguments = arguments
        process.standardOutput = handle
        process.standardError = handle
        let status = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Int32, any Error>) in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
            }
        }
        try handle.close()
        return (status, (try? String(contentsOf: log, encoding: .utf8)) ?? "")
    }

    static func findInPath(_ tool: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/sbin:/usr/bin:/sbin:/bin"
        let directories = path.split(separator: ":").map(String.init) + ["/usr/sbin", "/sbin"]
        return directories
            .map { "\($0)/\(tool)" }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Runs a short command synchronously; only used while deciding whether to skip.
    static func run(_ arguments: [String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            return -1
        }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Whether `ip netns` works here: creating and deleting one is the only reliable test
    /// (containers often forbid it).
    static func namespacesWork() -> Bool {
        let name = "lfsync-check-\(getpid())"
        guard run(["ip", "netns", "add", name]) == 0 else { return false }
        _ = run(["ip", "netns", "delete", name])
        return true
    }
}
