#if canImport(Glibc)
import Glibc
#endif
import Foundation
import LFSyncTransport

/// One thread that waits on an epoll instance and runs the handlers of every registered
/// socket: the only place the TCP transport ever blocks.
///
/// Why a dedicated thread: Swift's cooperative pool has one thread per core (two here), and
/// a blocking `epoll_wait` (or `connect`, or `getaddrinfo`) on it would stall every task in
/// the process. Sockets are non-blocking; callers first try the system call on their own
/// task (no thread hop when data or buffer space is already there) and only when it would
/// block do they park a continuation and arm the descriptor here (swift-nio's event loop
/// plays the same role, `NIOPosix` vs `NIOCore`).
///
/// Lifetime: owned by `TCPTransport` and by every registration; the thread stops once the
/// last owner is gone. Wake-ups (an earlier deadline, shutdown) go through an eventfd.
package final class EpollReactor: Sendable {
    package let core: ReactorCore

    package init() throws(TransportError) {
        let epollFD = LinuxSystemCalls.create()
        guard epollFD >= 0 else { throw TransportError(errno: errno, operation: "epoll_create1") }
        let wakeFD = LinuxSystemCalls.eventFD()
        guard wakeFD >= 0 else {
            let code = errno
            Glibc.close(epollFD)
            throw TransportError(errno: code, operation: "eventfd")
        }
        // Level-triggered: the loop drains the counter whenever it is reported.
        guard LinuxSystemCalls.control(epollFD, LinuxSystemCalls.controlAdd, wakeFD, events: LinuxSystemCalls.input, data: ReactorCore.wakeID) == 0 else {
            let code = errno
            Glibc.close(wakeFD)
            Glibc.close(epollFD)
            throw TransportError(errno: code, operation: "epoll_ctl")
        }
        let core = ReactorCore(epollFD: epollFD, wakeFD: wakeFD)
        self.core = core
        let thread = Thread { core.run() }
        thread.name = "lfsync-reactor"
        thread.start()
    }

    deinit {
        core.stop()
    }

    /// Registers `fd` (disarmed) or, with `fd == -1`, a timer-only registration.
    package func register(fd: Int32) throws(TransportError) -> ReactorRegistration {
        let registration = ReactorRegistration(id: core.makeID(), fd: fd, reactor: self)
        if fd >= 0 {
            // Added with only EPOLLONESHOT: disarmed (not even errors report) until `want`.
            guard LinuxSystemCalls.control(core.epollFD, LinuxSystemCalls.controlAdd, fd, events: LinuxSystemCalls.oneShot, data: registration.id) == 0 else {
                throw TransportError(errno: errno, operation: "epoll_ctl")
            }
        }
        return registration
    }
}
