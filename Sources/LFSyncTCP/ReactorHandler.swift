/// The object a registration dispatches to, always on the reactor thread.
///
/// Handlers must be quick and must not block: they do the non-blocking system call that
/// readiness allows, take their own locks briefly, and resume continuations.
package protocol ReactorHandler: AnyObject, Sendable {
    /// The armed interest fired (the registration is disarmed until someone wants again).
    func reactorEventsArrived(_ events: ReactorEvents)

    /// A deadline scheduled through the registration came due. Returns the handler's next
    /// pending deadline, if any, so the reactor can schedule it (see `ReactorTimerQueue`).
    func reactorTimerFired(now: MonotonicInstant) -> MonotonicInstant?
}
