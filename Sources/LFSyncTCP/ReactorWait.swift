import LFSyncSystem

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

    package let deadline: MonotonicInstant
    private let outcome = Eventual<Outcome>()

    package init(deadline: MonotonicInstant) {
        self.deadline = deadline
    }

    /// Ends the wait with `outcome` unless it already ended; safe from any thread.
    package func finish(_ outcome: Outcome) {
        self.outcome.resolve(outcome)
    }

    /// Suspends until the wait ends; arms `interest` on `registration` if given.
    package func wait(on registration: ReactorRegistration, for interest: ReactorInterest?) async -> Outcome {
        await withTaskCancellationHandler {
            // Armed before waiting: readiness that comes first resolves the outcome, which the
            // wait then returns at once. (A task cancelled already has run `onCancel` by now.)
            if outcome.value == nil {
                registration.schedule(at: deadline)
                if let interest { registration.want(interest) }
            }
            return await outcome.wait()
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
