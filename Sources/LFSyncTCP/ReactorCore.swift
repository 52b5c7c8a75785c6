#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import LFSyncSystem

/// The reactor's state and loop, shared by the owner and the thread (the thread must not
/// keep the owner alive, or it would never stop).
package final class ReactorCore: Sendable {
    package static let wakeID: UInt64 = 0

    package let epollFD: Int32
    private let wakeFD: Int32
    private let nextID = Atomic<UInt64>(1)

    private struct Entry {
        var registration: ReactorRegistration
        var handler: any ReactorHandler
    }

    private struct State: ~Copyable {
        var entries: [UInt64: Entry] = [:]
        var timers = ReactorTimerQueue()
        /// The deadline of each registration's live heap entry.
        var scheduled: [UInt64: MonotonicInstant] = [:]
        /// When the thread will wake by itself; nil while it is running handlers.
        var sleepingUntil: MonotonicInstant?
        var stopped = false
    }

    private let state = LockedState(State())

    package init(epollFD: Int32, wakeFD: Int32) {
        self.epollFD = epollFD
        self.wakeFD = wakeFD
    }

    package func makeID() -> UInt64 {
        nextID.wrappingAdd(1, ordering: .relaxed).oldValue
    }

    package func attach(_ handler: some ReactorHandler, to registration: ReactorRegistration) {
        state.withLock { $0.entries[registration.id] = Entry(registration: registration, handler: handler) }
    }

    package func detach(id: UInt64) {
        // The handler is released outside the lock: its deinit may run arbitrary cleanup.
        let removed = state.withLock { state -> Entry? in
            state.scheduled[id] = nil
            return state.entries.removeValue(forKey: id)
        }
        _ = removed
    }

    package func schedule(id: UInt64, at deadline: MonotonicInstant) {
        let mustWake = state.withLock { state -> Bool in
            if let existing = state.scheduled[id], existing <= deadline { return false }
            state.scheduled[id] = deadline
            state.timers.insert(.init(deadline: deadline, id: id))
            guard let sleepingUntil = state.sleepingUntil else { return false }
            return deadline < sleepingUntil
        }
        if mustWake { wake() }
    }

    package func stop() {
        state.withLock { $0.stopped = true }
        wake()
    }

    private func wake() {
        var one: UInt64 = 1
        _ = Glibc.write(wakeFD, &one, MemoryLayout<UInt64>.size)
    }

    /// The thread body.
    package func run() {
        let capacity = 256
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity * LinuxSystemCalls.eventStride, alignment: 8)
        defer {
            buffer.deallocate()
            Glibc.close(wakeFD)
            Glibc.close(epollFD)
        }
        while true {
            let timeout = state.withLock { state -> Int32? in
                guard !state.stopped else { return nil }
                guard let earliest = state.timers.earliest else {
                    state.sleepingUntil = MonotonicInstant(nanoseconds: .max)
                    return -1
                }
                state.sleepingUntil = earliest
                return earliest.millisecondsAfter(.now())
            }
            guard let timeout else { return }
            let count = LinuxSystemCalls.wait(epollFD, into: buffer, timeoutMilliseconds: timeout)
            let code = errno  // before the lock, whose futex calls may overwrite it
            state.withLock { $0.sleepingUntil = nil }
            if count < 0 && code != EINTR {
                // Only EBADF/EFAULT/EINVAL are possible, all programming errors; stop rather than spin.
                assertionFailure("epoll_wait failed with errno \(code)")
                return
            }
            for index in 0..<max(0, Int(count)) {
                let (events, id) = LinuxSystemCalls.event(at: index, in: buffer)
                if id == Self.wakeID {
                    var counter: UInt64 = 0
                    _ = Glibc.read(wakeFD, &counter, MemoryLayout<UInt64>.size)
                    continue
                }
                dispatch(id: id, events: events)
            }
            fireTimers()
        }
    }

    private func dispatch(id: UInt64, events: UInt32) {
        // Gone already: the owner cancelled between the kernel's report and now.
        guard let entry = state.withLock({ $0.entries[id] }) else { return }
        let failed = events & (LinuxSystemCalls.error | LinuxSystemCalls.hangUp) != 0
        let reported = ReactorEvents(
            readable: failed || events & (LinuxSystemCalls.input | LinuxSystemCalls.readHangUp) != 0,
            writable: failed || events & LinuxSystemCalls.output != 0)
        entry.registration.dispatchBegan()
        entry.handler.reactorEventsArrived(reported)
        entry.registration.dispatchEnded()
    }

    private func fireTimers() {
        let now = MonotonicInstant.now()
        let due = state.withLock { state -> [(UInt64, any ReactorHandler)] in
            var due: [(UInt64, any ReactorHandler)] = []
            while let entry = state.timers.popDue(at: now) {
                // Stale unless it is the registration's live entry.
                guard state.scheduled[entry.id] == entry.deadline else { continue }
                state.scheduled[entry.id] = nil
                if let registered = state.entries[entry.id] { due.append((entry.id, registered.handler)) }
            }
            return due
        }
        for (id, handler) in due {
            if let next = handler.reactorTimerFired(now: now) { schedule(id: id, at: next) }
        }
    }
}
