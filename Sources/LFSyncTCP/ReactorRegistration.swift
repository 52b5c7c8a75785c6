#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import LFSyncSystem

/// One file descriptor (or a pure timer) registered with an `EpollReactor`.
///
/// Interest is one-shot: `want(_:)` arms the descriptor for what its owner waits for, the
/// kernel disarms it when it reports, and the reactor re-arms whatever is still wanted after
/// dispatching. Arming after a would-block result cannot lose a wake-up: `EPOLL_CTL_MOD`
/// re-checks readiness, so data that arrived in between is reported at once.
package final class ReactorRegistration: Sendable {
    package let id: UInt64
    /// The registered descriptor, or -1 for a timer-only registration.
    package let fd: Int32
    /// Keeps the reactor (its thread and epoll descriptor) alive while registered, so an
    /// `epoll_ctl` never reaches a closed or reused epoll descriptor.
    private let reactor: EpollReactor

    private struct Arming {
        var wanted: ReactorInterest = []
        var armed: ReactorInterest = []
        var active = true
    }

    private let arming = LockedState(Arming())

    package init(id: UInt64, fd: Int32, reactor: EpollReactor) {
        self.id = id
        self.fd = fd
        self.reactor = reactor
    }

    /// Installs the handler events and timers go to. Call once, before the first `want`.
    package func attach(_ handler: some ReactorHandler) {
        reactor.core.attach(handler, to: self)
    }

    /// Arms the descriptor for `interest` (in addition to what is already wanted).
    package func want(_ interest: ReactorInterest) {
        arming.withLock { arming in
            arming.wanted.formUnion(interest)
            synchronize(&arming)
        }
    }

    /// Stops wanting `interest`. The kernel side is left as is: a stray report later is
    /// harmless (handlers ignore readiness nobody waits for) and saves a system call.
    package func unwant(_ interest: ReactorInterest) {
        arming.withLock { $0.wanted.subtract(interest) }
    }

    /// Schedules a call to `reactorTimerFired` at (or shortly after) `deadline`.
    package func schedule(at deadline: MonotonicInstant) {
        reactor.core.schedule(id: id, at: deadline)
    }

    /// Removes the registration; call before closing the descriptor. Idempotent.
    package func cancel() {
        let wasActive = arming.withLock { arming in
            guard arming.active else { return false }
            arming.active = false
            if fd >= 0 {
                _ = LinuxSystemCalls.control(reactor.core.epollFD, LinuxSystemCalls.controlDelete, fd, events: 0, data: id)
            }
            return true
        }
        if wasActive { reactor.core.detach(id: id) }
    }

    /// The reactor fetched an event: the kernel has disarmed the descriptor.
    package func dispatchBegan() {
        arming.withLock { $0.armed = [] }
    }

    /// The handler ran: re-arm whatever is still wanted.
    package func dispatchEnded() {
        arming.withLock { synchronize(&$0) }
    }

    private func synchronize(_ arming: inout Arming) {
        guard arming.active, fd >= 0, !arming.wanted.isEmpty, !arming.armed.isSuperset(of: arming.wanted) else { return }
        var events = LinuxSystemCalls.oneShot
        if arming.wanted.contains(.read) { events |= LinuxSystemCalls.input | LinuxSystemCalls.readHangUp }
        if arming.wanted.contains(.write) { events |= LinuxSystemCalls.output }
        if LinuxSystemCalls.control(reactor.core.epollFD, LinuxSystemCalls.controlModify, fd, events: events, data: id) == 0 {
            arming.armed = arming.wanted
        }
    }
}
