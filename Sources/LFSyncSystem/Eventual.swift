import Synchronization

/// A value that arrives once, and every task that asks for it before then
/// waits: a consent's answer, a transfer's final summaries, a receive
/// session's outcomes. The one implementation of "park continuations until
/// it is known, resume each exactly once", so no call site can forget a
/// waiter or resume one twice.
package final class Eventual<Value: Sendable>: Sendable {
    private enum State {
        case pending([CheckedContinuation<Value, Never>])
        case known(Value)
    }

    private let state = Mutex(State.pending([]))

    package init() {}

    /// The value, if it has arrived.
    package var value: Value? {
        state.withLock { state in
            if case let .known(value) = state { return value }
            return nil
        }
    }

    /// Sets the value unless it is already known; true when this call set it.
    @discardableResult
    package func resolve(_ value: Value) -> Bool {
        let waiters: [CheckedContinuation<Value, Never>]? = state.withLock { state in
            guard case let .pending(waiters) = state else { return nil }
            state = .known(value)
            return waiters
        }
        guard let waiters else { return false }
        for waiter in waiters { waiter.resume(returning: value) }
        return true
    }

    /// The value, once it is known. Cancelling the waiting task does not end
    /// the wait: callers that must react to cancellation resolve the value
    /// themselves (see `OutgoingTransfer.waitUntilCompleted()`).
    package func wait() async -> Value {
        await withCheckedContinuation { continuation in
            let known: Value? = state.withLock { state in
                switch state {
                case let .known(value):
                    return value
                case var .pending(waiters):
                    waiters.append(continuation)
                    state = .pending(waiters)
                    return nil
                }
            }
            if let known { continuation.resume(returning: known) }
        }
    }
}
