#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// The process that writes `inFlight` rows, so that a reader can tell a row some running
/// push is working on from one a crashed or killed push left behind (`SyncState.interrupted`).
///
/// A run is this process: its PID, the boot it runs in, and the moment the kernel started
/// it (`/proc/PID/stat`, field 22, clock ticks since boot), which together name it for good
/// — a PID is reused, a PID with its start time in the same boot is not. Linux only, as
/// lfsync is.
struct LedgerRun: Sendable, Hashable {
    let pid: Int32
    let boot: String
    let started: Int64

    /// This process, if `/proc` says who it is.
    static let current: LedgerRun? = {
        let pid = getpid()
        guard let boot = bootID, let started = startTime(of: pid) else { return nil }
        return LedgerRun(pid: pid, boot: boot, started: started)
    }()

    /// Whether the process is still running: same boot, and its PID still started then.
    var isAlive: Bool {
        guard boot == Self.bootID else { return false }
        return Self.startTime(of: pid) == started
    }

    private static let bootID: String? = {
        guard let text = try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8) else { return nil }
        let id = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return id.isEmpty ? nil : id
    }()

    /// Field 22 of `/proc/PID/stat`. The second field (the command name, in parentheses)
    /// may hold spaces and parentheses itself: the fields are counted from the last `)`.
    static func startTime(of pid: Int32) -> Int64? {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/stat"),
              let close = data.lastIndex(of: UInt8(ascii: ")"))
        else { return nil }
        let fields = data[data.index(after: close)...].split(separator: UInt8(ascii: " "))
        // After the name: field 3 (state) is fields[0], so field 22 is fields[19].
        guard fields.count > 19 else { return nil }
        return Int64(String(decoding: fields[19], as: UTF8.self))
    }
}
