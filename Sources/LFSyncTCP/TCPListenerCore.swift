#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import LFSyncTransport

/// The listener's state, registered with the reactor.
final class TCPListenerCore: ReactorHandler, Sendable {
    package typealias AcceptResult = Result<TCPConnection, TransportError>

    private struct Waiter {
        var id: UInt64
        var continuation: CheckedContinuation<AcceptResult, Never>
    }

    private struct State {
        var open = true
        var waiters: [Waiter] = []
    }

    private let registration: ReactorRegistration
    private let reactor: EpollReactor
    package var fd: Int32 { registration.fd }
    private let configuration: TCPTransport.Configuration
    private let state = Mutex(State())
    private let waiterIDs = Atomic<UInt64>(0)

    package init(registration: ReactorRegistration, reactor: EpollReactor, configuration: TCPTransport.Configuration) {
        self.registration = registration
        self.reactor = reactor
        self.configuration = configuration
    }

    private enum AcceptStep {
        case accepted(Int32)
        case wouldBlock
        case failed(TransportError)
    }

    /// One `accept4`, retrying what only concerns the aborted connection (ECONNABORTED,
    /// EPROTO) or the call (EINTR).
    private func acceptOnce() -> AcceptStep {
        while true {
            let fd = LinuxSystemCalls.acceptNonBlocking(registration.fd)
            if fd >= 0 { return .accepted(fd) }
            let code = errno
            switch code {
            case EINTR, ECONNABORTED, EPROTO: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            default: return .failed(TransportError(errno: code, operation: "accept"))
            }
        }
    }

    private func makeConnection(_ fd: Int32) -> AcceptResult {
        SocketIO.configureConnected(fd)
        do {
            let connectionRegistration = try reactor.register(fd: fd)
            let core = TCPConnectionCore(registration: connectionRegistration, configuration: configuration)
            connectionRegistration.attach(core)
            return .success(TCPConnection(core: core))
        } catch {
            Glibc.close(fd)
            return .failure(error)
        }
    }

    package func accept() async throws(TransportError) -> any Connection {
        let immediate = state.withLock { state -> AcceptStep? in
            guard state.open else { return .failed(.closed) }
            guard state.waiters.isEmpty else { return nil }
            switch acceptOnce() {
            case .wouldBlock: return nil
            case let step: return step
            }
        }
        switch immediate {
        case .accepted(let fd)?: return try makeConnection(fd).get()
        case .failed(let error)?: throw error
        case .wouldBlock?, nil: break
        }
        let id = waiterIDs.wrappingAdd(1, ordering: .relaxed).oldValue
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<AcceptResult, Never>) in
                let early = state.withLock { state -> AcceptResult? in
                    guard state.open else { return .failure(.closed) }
                    if Task.isCancelled { return .failure(.cancelled) }
                    state.waiters.append(Waiter(id: id, continuation: continuation))
                    return nil
                }
                if let early {
                    continuation.resume(returning: early)
                    return
                }
                registration.want(.read)
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index)
            }
            waiter?.continuation.resume(returning: .failure(.cancelled))
        }
        return try result.get()
    }

    package func reactorEventsArrived(_ events: ReactorEvents) {
        var accepted: [(CheckedContinuation<AcceptResult, Never>, Int32)] = []
        var failed: [(CheckedContinuation<AcceptResult, Never>, TransportError)] = []
        let rearm = state.withLock { state -> Bool in
            guard state.open else { return false }
            while let waiter = state.waiters.first {
                switch acceptOnce() {
                case .accepted(let fd):
                    state.waiters.removeFirst()
                    accepted.append((waiter.continuation, fd))
                case .wouldBlock:
                    return true
                case .failed(let error):
                    // EMFILE and friends: fail this caller rather than spin on a readable socket.
                    state.waiters.removeFirst()
                    failed.append((waiter.continuation, error))
                    return false
                }
            }
            return false
        }
        if rearm { registration.want(.read) } else { registration.unwant(.read) }
        for (continuation, fd) in accepted { continuation.resume(returning: makeConnection(fd)) }
        for (continuation, error) in failed { continuation.resume(returning: .failure(error)) }
        // Waiters left after a failure get another chance with the next readiness report.
        if !failed.isEmpty, state.withLock({ !$0.waiters.isEmpty && $0.open }) { registration.want(.read) }
    }

    package func reactorTimerFired(now: MonotonicInstant) -> MonotonicInstant? { nil }

    /// Closes the socket; pending accepts end with `.closed`. Idempotent.
    package func shutDown() {
        let waiters = state.withLock { state -> [Waiter] in
            guard state.open else { return [] }
            state.open = false
            registration.cancel()
            Glibc.close(registration.fd)
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.continuation.resume(returning: .failure(.closed)) }
    }
}
