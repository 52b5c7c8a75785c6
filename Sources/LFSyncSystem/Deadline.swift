/// The one way the engine says "unless cancelled first, do this after that
/// long": a consent nobody answered becomes a no, a handshake that overruns
/// has its connection closed, an offer nobody replied to fails. The clock is
/// the caller's, so tests drive every deadline with a manual clock.
package struct Deadline: Sendable {
    private let timer: Task<Void, Never>

    /// Starts the timer; `action` runs once `duration` has passed on `clock`, unless
    /// `cancel()` came first.
    @discardableResult
    package static func after(_ duration: Duration, on clock: any Clock<Duration>, _ action: @escaping @Sendable () async -> Void) -> Deadline {
        Deadline(timer: Task {
            do { try await clock.sleep(for: duration) } catch { return }
            if !Task.isCancelled { await action() }
        })
    }

    /// Stops the timer; the action will not run (if it has not already).
    package func cancel() {
        timer.cancel()
    }
}
