import Foundation
import Synchronization
import LFSyncSystem

/// Pumps avahi's libdns_sd on one dedicated thread.
///
/// Avahi's compat layer has no `DNSServiceSetDispatchQueue`: results are
/// signalled on each ref's socket and delivered by a blocking
/// `DNSServiceProcessResult`, and the set-up calls themselves block on D-Bus.
/// None of that may run on Swift's cooperative threads. So all libdns_sd
/// calls — creating, processing and deallocating refs — happen on this
/// loop's thread, which `poll`s the ref sockets plus a wake-up pipe. Other
/// threads only `submit` jobs, so no libdns_sd object is ever touched by two
/// threads.
///
/// The thread starts with the first job and ends as soon as nothing is left
/// to watch (no streams, no advertisements), so an idle discovery object
/// costs no thread and needs no explicit shutdown.
final class DNSSDEventLoop: Sendable {
    package typealias Job = @Sendable (DNSSDLoopState) -> Void

    private struct Inbox {
        var jobs: [Job] = []
        var running = false
        /// Write end of the running thread's wake-up pipe (nil: the thread polls every 50 ms).
        var wakeFD: Int32?
    }

    private let inbox = LockedState(Inbox())
    private let lastID = Atomic<UInt64>(0)

    package init() {}

    /// A process-unique ID for a session (stream or advertisement) of this loop.
    package func makeID() -> UInt64 {
        lastID.add(1, ordering: .relaxed).newValue
    }

    /// Whether the loop thread is alive; for tests that check it stops when idle.
    package var isRunning: Bool {
        inbox.withLock { $0.running }
    }

    /// Runs `job` on the loop thread, in submission order. Never blocks on I/O.
    package func submit(_ job: @escaping Job) {
        let wakePipe: WakePipe?? = inbox.withLock { inbox in
            inbox.jobs.append(job)
            if inbox.running {
                if let fd = inbox.wakeFD { WakePipe.signal(fd) }
                return nil
            }
            inbox.running = true
            let pipe = WakePipe()
            inbox.wakeFD = pipe?.writeFD
            return .some(pipe)
        }
        guard case let .some(pipe) = wakePipe else { return }
        let thread = Thread { [self] in
            run(wakePipe: pipe)
        }
        thread.name = "lfsync-dnssd"
        thread.start()
    }

    private func run(wakePipe: WakePipe?) {
        let state = DNSSDLoopState()
        while true {
            let idle = state.isIdle
            let jobs: [Job]? = inbox.withLock { inbox in
                if !inbox.jobs.isEmpty {
                    defer { inbox.jobs.removeAll() }
                    return inbox.jobs
                }
                guard idle else { return [] }
                // Decided under the lock, so a concurrent `submit` either lands
                // before (and is run) or sees `running == false` and starts a new thread.
                inbox.running = false
                inbox.wakeFD = nil
                return nil
            }
            guard let jobs else { break }
            guard jobs.isEmpty else {
                for job in jobs {
                    job(state)
                    state.deallocateRetired()
                }
                continue
            }
            state.pollOnce(wakeFD: wakePipe?.readFD)
        }
        wakePipe?.close()
    }
}
