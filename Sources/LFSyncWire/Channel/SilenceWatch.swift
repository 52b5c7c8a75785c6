import Synchronization
import LFSyncTransport
import LFSyncSystem

/// Ends a connection whose peer has fallen silent in the middle of a Noise
/// message, a frame or a segment, once `FrameProgress` says it is too slow —
/// also when not one more byte comes. Why: the rate was checked only when a
/// receive returned, so 10 bytes of a message and then silence held the
/// connection open until the transport's idle timeout (60 s), not the 30 s
/// PROTOCOL.md gives.
///
/// One watchdog task per channel, started at the first wait inside a message
/// and checking four times a second — not a timer per receive, which a bulk
/// transfer (always inside a frame) would pay thousands of times a second.
/// The task holds only the watched state, never the watch: the watch's owner
/// going away cancels it (and no weak reference is needed, which
/// LeakSanitizer cannot follow).
final class SilenceWatch: Sendable {
    private struct State {
        var waitingSince: ContinuousClock.Instant?
        var allowance: Duration = .zero
        var fired = false
    }

    /// What the watchdog task and the reader share.
    private final class Watched: Sendable {
        let state = LockedState(State())
        let connection: any Connection

        init(connection: any Connection) {
            self.connection = connection
        }

        func expired() -> Bool {
            state.withLock { state in
                guard let since = state.waitingSince, !state.fired, ContinuousClock.now - since >= state.allowance else { return false }
                state.fired = true
                return true
            }
        }
    }

    static let tick: Duration = .milliseconds(250)
    private let watched: Watched
    private let watchdog = LockedState<Task<Void, Never>?>(nil)

    init(connection: any Connection) {
        watched = Watched(connection: connection)
    }

    deinit {
        watchdog.withLock { $0?.cancel() }
    }

    /// A wait for the peer begins, inside a message; the peer may stay silent for `allowance`.
    func begin(allowance: Duration) {
        watched.state.withLock { state in
            state.waitingSince = .now
            state.allowance = allowance
        }
        watchdog.withLock { task in
            guard task == nil else { return }
            let watched = watched
            task = Task {
                while !Task.isCancelled {
                    do { try await Task.sleep(for: Self.tick) } catch { return }
                    if watched.expired() {
                        await watched.connection.abort()
                        return
                    }
                }
            }
        }
    }

    /// The wait ended; true when the watch closed the connection for it.
    func end() -> Bool {
        watched.state.withLock { state in
            state.waitingSince = nil
            return state.fired
        }
    }
}
