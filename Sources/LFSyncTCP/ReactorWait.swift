import Synchronization

/// A single wait on the reactor that ends exactly once, with whichever comes first:
/// readiness of the registration, its deadline, task cancellation, or `finish(_:)` from
/// another thread (a resolver thread's answer).
///
/// Used for the one-off waits of connection set-up (resolving, connecting); established
/// connections have their own, longer-lived handlers.
final class ReactorWait<Value: Sendable>: ReactorHandler, Sendable {
    package enum Outcome: Sendable {
        case ready
        case timedOut
        case cancelled
        case completed(Value)
    }

    private struct State {
        var continuation: CheckedContinuation<Outcome, Never>?
        var outcome: Outcome?
    }

    package let deadline: MonotonicInstant
    private let state = Mutex(State())

    package init(deadline: MonotonicInstant) {
        self.deadline = deadline
    }

    /// Ends the wait with `outcome` unless it already ended; safe from any thread.
    package func finish(_ outcome: Outcome) {
        let continuation = state.withLock { state -> CheckedContinuation<Outcome, Never>? in
            guard state.outcome == nil else { return nil }
            state.outcome = outcome
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(returning: outcome)
    }

    /// Suspends until the wait ends; arms `interest` on `registration` if given.
    package func wait(on registration: ReactorRegistration, for interest: ReactorInterest?) async -> Outcome {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
                let early = state.withLock { state -> Outcome? in
                    if let outcome = state.outcome { return outcome }
                    if Task.isCancelled {
                        state.outcome = .cancelled
                        return .cancelled
                    }
                    state.continuation = continuation
                    return nil
                }
                if let early {
                    continuation.resume(returning: early)
                    return
                }
                registration.schedule(at: deadline)
                if let interest { registration.want(interest) }
            }
        } onCancel: {
            finish(.cancelled)
        }
    }

    package func reactorEventsArrived(_ events: ReactorEvents) {
        finish(.ready)
    }

    package func reactorTimerFired(now: MonotonicInstant) -> MonotonicInstant? {
        guard now >= deadline else { return deadline }
        finish(.timedOut)
        return nil
    }
}
