#if canImport(Glibc)
import Glibc
#endif
import LFSyncSystem
import LFSyncTransport

/// The listener's state, registered with the reactor.
final class TCPListenerCore: ReactorHandler, Sendable {
    package typealias AcceptResult = Result<TCPConnection, TransportError>

    private struct State: Sendable {
        var open = true
    }

    private let registration: ReactorRegistration
    private let reactor: EpollReactor
    package var fd: Int32 { registration.fd }
    private let configuration: TCPTransport.Configuration
    /// Accepts wait here; each tries `accept4` itself, under the lock, when it
    /// comes and again when the reactor reports the socket readable.
    private let state = Monitor(State())

    package init(registration: ReactorRegistration, reactor: EpollReactor, configuration: TCPTransport.Configuration) {
        self.registration = registration
        self.reactor = reactor
        self.configuration = configuration
    }

    private enum AcceptStep: Sendable {
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
        let registration = registration
        let step = await state.wait(orIfCancelled: AcceptStep.failed(.cancelled), until: { [self] state in
            guard state.open else { return .failed(.closed) }
            switch acceptOnce() {
            case .wouldBlock: return nil
            case let step: return step
            }
        }, whenParked: {
            // Armed only once parked: the readiness report then finds this accept waiting.
            registration.want(.read)
        })
        switch step {
        case .accepted(let fd): return try makeConnection(fd).get()
        case .failed(let error): throw error
        case .wouldBlock: throw .closed  // not returned by the condition above
        }
    }

    package func reactorEventsArrived(_ events: ReactorEvents) {
        // Every waiting accept tries again, in order. An error (EMFILE and friends) fails the
        // accepts it reaches rather than spin on a readable socket.
        state.withLock { _ in }
        // Not wanting read any more matters: a re-armed one-shot registration would report a
        // pending connection again and again with nobody waiting.
        if state.waiterCount > 0 { registration.want(.read) } else { registration.unwant(.read) }
    }

    package func reactorTimerFired(now: MonotonicInstant) -> MonotonicInstant? { nil }

    /// Closes the socket; pending accepts end with `.closed`. Idempotent.
    package func shutDown() {
        state.withLock { state in
            guard state.open else { return }
            state.open = false
            registration.cancel()
            Glibc.close(registration.fd)
        }
    }
}
