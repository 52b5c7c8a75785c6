internal import CDNSSD
#if canImport(Glibc)
import Glibc
#endif

/// Everything the loop thread owns: live sessions, the refs to poll, timers.
/// Only the loop thread touches it, which is why it needs no lock.
final class DNSSDLoopState {
    /// A browse stream or an advertisement, addressable by ID from other threads' jobs.
    package typealias SessionID = UInt64

    package struct TimerID: Hashable {
        fileprivate let raw: UInt64
    }

    private struct Timer {
        let deadline: ContinuousClock.Instant
        let action: () -> Void
    }

    /// When no wake-up pipe exists, poll this often so jobs are still picked up.
    private static let fallbackPollMilliseconds: Int32 = 50

    private(set) var sessions: [SessionID: any DNSSDSession] = [:]
    private var watched: [ObjectIdentifier: DNSSDServiceRef] = [:]
    private var retired: [DNSSDServiceRef] = []
    private var timers: [UInt64: Timer] = [:]
    private var lastTimerID: UInt64 = 0

    package var isIdle: Bool {
        sessions.isEmpty && watched.isEmpty && retired.isEmpty && timers.isEmpty
    }

    // MARK: Sessions

    package func add(_ session: any DNSSDSession, id: SessionID) {
        sessions[id] = session
    }

    package func remove(sessionID: SessionID) {
        sessions[sessionID] = nil
    }

    package func stopSession(_ id: SessionID) {
        sessions[id]?.stop()
    }

    // MARK: Refs

    /// Starts polling a freshly created ref on behalf of `owner`.
    package func watch(_ pointer: DNSServiceRef, owner: any DNSSDRefOwner) -> DNSSDServiceRef {
        let ref = DNSSDServiceRef(pointer: pointer, owner: owner)
        watched[ObjectIdentifier(ref)] = ref
        return ref
    }

    /// Stops callbacks for `ref` now and deallocates it once the current
    /// `DNSServiceProcessResult` (which may be running its callback) returned.
    package func retire(_ ref: DNSSDServiceRef?) {
        guard let ref, !ref.isRetired else { return }
        ref.retire()
        watched[ObjectIdentifier(ref)] = nil
        retired.append(ref)
    }

    package func deallocateRetired() {
        while let ref = retired.popLast() {
            ref.deallocate()
        }
    }

    // MARK: Timers

    package func schedule(after delay: Duration, _ action: @escaping () -> Void) -> TimerID {
        lastTimerID += 1
        timers[lastTimerID] = Timer(deadline: .now + delay, action: action)
        return TimerID(raw: lastTimerID)
    }

    package func cancel(_ timer: TimerID?) {
        guard let timer else { return }
        timers[timer.raw] = nil
    }

    private func fireDueTimers() {
        let now = ContinuousClock.now
        let due = timers.filter { $0.value.deadline <= now }.sorted { $0.value.deadline < $1.value.deadline }
        for (id, _) in due {
            // An earlier action may have cancelled this one.
            guard let timer = timers.removeValue(forKey: id) else { continue }
            timer.action()
            deallocateRetired()
        }
    }

    private func pollTimeoutMilliseconds() -> Int32 {
        guard let next = timers.values.map(\.deadline).min() else { return -1 }
        let remaining = next - ContinuousClock.now
        guard remaining > .zero else { return 0 }
        let (seconds, attoseconds) = remaining.components
        let milliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1
        return Int32(clamping: milliseconds)
    }

    // MARK: Polling

    /// Waits for a ref socket, the wake-up pipe or the next timer, then
    /// delivers what is ready. The only place the loop thread blocks.
    package func pollOnce(wakeFD: Int32?) {
        let refs = Array(watched.values)
        var descriptors: [pollfd] = []
        descriptors.reserveCapacity(refs.count + 1)
        if let wakeFD { descriptors.append(pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)) }
        for ref in refs { descriptors.append(pollfd(fd: ref.socket, events: Int16(POLLIN), revents: 0)) }

        var timeout = pollTimeoutMilliseconds()
        if wakeFD == nil {
            timeout = timeout < 0 ? Self.fallbackPollMilliseconds : min(timeout, Self.fallbackPollMilliseconds)
        }
        let ready = poll(&descriptors, nfds_t(descriptors.count), timeout)
        if ready < 0 {
            // EINTR is routine; anything else must not turn into a busy loop.
            if errno != EINTR { usleep(10_000) }
            return
        }
        var first = 0
        if let wakeFD {
            if descriptors[0].revents != 0 { WakePipe.drain(wakeFD) }
            first = 1
        }
        for (offset, ref) in refs.enumerated() where descriptors[first + offset].revents != 0 {
            // A callback for an earlier ref may have retired this one.
            guard ref.isActive else { continue }
            let status = ref.processResult()
            if status != DNSSDErrorCode.noError, ref.isActive {
                ref.owner?.serviceRef(ref, failedWith: status)
                retire(ref)
            }
            deallocateRetired()
        }
        fireDueTimers()
    }
}
