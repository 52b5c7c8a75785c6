/// A value that arrives once, and every task that asks for it before then
/// waits: a consent's answer, a transfer's final summaries, a receive
/// session's outcomes, an offer's reply. The simplest `Monitor`: the
/// condition is "the value is known", so no call site can forget a waiter
/// or resume one twice.
package final class Eventual<Value: Sendable>: Sendable {
    private let state = Monitor<Value?>(nil)

    package init() {}

    /// The value, if it has arrived.
    package var value: Value? {
        state.withLock { $0 }
    }

    /// Sets the value unless it is already known; true when this call set it.
    @discardableResult
    package func resolve(_ value: Value) -> Bool {
        state.withLock { known in
            guard known == nil else { return false }
            known = value
            return true
        }
    }

    /// The value, once it is known. Cancelling the waiting task does not end
    /// the wait: callers that must react to cancellation resolve the value
    /// themselves (see `OutgoingTransfer.waitUntilCompleted()`).
    package func wait() async -> Value {
        await state.wait { $0 }
    }

    /// The value once it is known, or nil as soon as the waiting task is cancelled.
    package func waitUnlessCancelled() async -> Value? {
        await state.wait(orIfCancelled: nil) { value -> Value?? in value.map { .some($0) } }
    }
}
