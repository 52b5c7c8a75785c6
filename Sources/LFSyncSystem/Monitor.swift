import Synchronization

/// A state behind a lock, and the tasks waiting until it lets them through:
/// the one implementation of "wait until a condition holds" — room in a
/// queue, the next batch of a push, a free job slot, bytes to read.
///
/// A waiter states its condition as a closure that runs under the lock: at
/// once, and again after every change made through `withLock`. It returns
/// nil to keep waiting, or the waiter's result, and may change the state as
/// it does — take the slot or the bytes it waited for — so checking and
/// taking are one step and two waiters cannot both take the last slot.
/// `Eventual` is the special case of a value that arrives once.
///
/// Parked waiters are tried in the order they came, after every change; one
/// whose condition fails does not hold back the next, and a new waiter tries
/// once before it parks (a condition that must respect an order says so
/// itself, as `ManualClock`'s does). Cancelling a waiting task ends
/// its wait at once with the value it named for that case — unless it asked
/// to wait regardless, for a turn that must be taken (a writer's turn, a
/// close letting its jobs report back). Nobody is resumed twice, and every
/// continuation is resumed after the lock is released.
package final class Monitor<State: Sendable>: Sendable {
    private struct Waiter: Sendable {
        let id: UInt64
        /// Runs the waiter's condition; when it holds, returns the wake-up to run unlocked.
        let attempt: @Sendable (inout State) -> (@Sendable () -> Void)?
        let cancel: @Sendable () -> Void
    }

    private struct Guarded: Sendable {
        var state: State
        var waiters: [Waiter] = []
        var nextID: UInt64 = 0

        /// Lets through every waiter whose condition now holds, until none does:
        /// one that takes something can make room for another.
        mutating func serve() -> [@Sendable () -> Void] {
            var wakeups: [@Sendable () -> Void] = []
            var progressed = !waiters.isEmpty
            while progressed {
                progressed = false
                var index = 0
                while index < waiters.count {
                    if let wakeup = waiters[index].attempt(&state) {
                        waiters.remove(at: index)
                        wakeups.append(wakeup)
                        progressed = true
                    } else {
                        index += 1
                    }
                }
            }
            return wakeups
        }
    }

    private let guarded: LockedState<Guarded>

    package init(_ state: State) {
        guarded = LockedState(Guarded(state: state))
    }

    /// Reads or changes the state; waiters the change lets through are woken.
    @discardableResult
    package func withLock<Result: Sendable>(_ body: (inout State) -> Result) -> Result {
        let (result, wakeups) = guarded.withLock { guarded -> (Result, [@Sendable () -> Void]) in
            let result = body(&guarded.state)
            return (result, guarded.serve())
        }
        for wakeup in wakeups { wakeup() }
        return result
    }

    /// Number of tasks waiting, for tests and diagnostics.
    package var waiterCount: Int { guarded.withLock { $0.waiters.count } }

    /// Waits until `condition` returns a value, and returns it, whether or not
    /// the task is cancelled meanwhile.
    /// - Parameter whenParked: as for the cancellable `wait`.
    package func wait<Result: Sendable>(
        until condition: @escaping @Sendable (inout State) -> Result?,
        whenParked: (() -> Void)? = nil
    ) async -> Result {
        let id: UInt64
        switch passNow(condition) {
        case let .passed(value): return value
        case let .mustWait(waiterID): id = waiterID
        }
        return await withCheckedContinuation { (continuation: CheckedContinuation<Result, Never>) in
            if park(id, continuation, until: condition, orIfCancelled: nil) { whenParked?() }
        }
    }

    /// Waits until `condition` returns a value, and returns it; `cancelled` if
    /// the task is cancelled first.
    /// - Parameter whenParked: runs (unlocked) once the waiter is parked, for
    ///   what must follow parking, not precede it: arming a descriptor, whose
    ///   readiness report then finds the waiter there.
    package func wait<Result: Sendable>(
        orIfCancelled cancelled: Result,
        until condition: @escaping @Sendable (inout State) -> Result?,
        whenParked: (() -> Void)? = nil
    ) async -> Result {
        let id: UInt64
        switch passNow(condition) {
        case let .passed(value): return value
        case let .mustWait(waiterID): id = waiterID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result, Never>) in
                if park(id, continuation, until: condition, orIfCancelled: cancelled) { whenParked?() }
            }
        } onCancel: {
            forget(id)
        }
    }

    private enum FirstTry<Result> {
        case passed(Result)
        /// The ID the waiter parks under.
        case mustWait(UInt64)
    }

    /// The condition tried once, without parking: most waits pass at once
    /// (a free turn, a buffered message), and need no continuation.
    private func passNow<Result: Sendable>(_ condition: (inout State) -> Result?) -> FirstTry<Result> {
        let (outcome, wakeups) = guarded.withLock { guarded -> (FirstTry<Result>, [@Sendable () -> Void]) in
            guard let value = condition(&guarded.state) else {
                guarded.nextID += 1
                return (.mustWait(guarded.nextID), [])
            }
            return (.passed(value), guarded.serve())
        }
        for wakeup in wakeups { wakeup() }
        return outcome
    }

    /// Lets the waiter through at once if its condition holds, or parks it;
    /// true when parked. `cancelled` nil: the wait ignores cancellation.
    @discardableResult
    private func park<Result: Sendable>(
        _ id: UInt64, _ continuation: CheckedContinuation<Result, Never>,
        until condition: @escaping @Sendable (inout State) -> Result?, orIfCancelled cancelled: Result?
    ) -> Bool {
        let (now, wakeups) = guarded.withLock { guarded -> (Result?, [@Sendable () -> Void]) in
            if let value = condition(&guarded.state) { return (value, guarded.serve()) }
            // Checked under the lock the cancellation handler takes: either it has run
            // (and the flag is set) or it will find this waiter.
            if let cancelled, Task.isCancelled { return (cancelled, []) }
            let attempt: @Sendable (inout State) -> (@Sendable () -> Void)? = { state in
                guard let value = condition(&state) else { return nil }
                return { continuation.resume(returning: value) }
            }
            let cancel: @Sendable () -> Void = { if let cancelled { continuation.resume(returning: cancelled) } }
            guarded.waiters.append(Waiter(id: id, attempt: attempt, cancel: cancel))
            return (nil, [])
        }
        if let now { continuation.resume(returning: now) }
        for wakeup in wakeups { wakeup() }
        return now == nil
    }

    /// Ends a cancelled task's wait, unless it was let through first.
    private func forget(_ id: UInt64) {
        let waiter = guarded.withLock { guarded -> Waiter? in
            guard let index = guarded.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return guarded.waiters.remove(at: index)
        }
        waiter?.cancel()
    }
}
