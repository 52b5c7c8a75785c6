import Dispatch

/// A thread of its own for calls that block: a SQLite commit waiting for its
/// fsync, a `pread` or `pwrite` that may wait for the disk.
///
/// Swift's cooperative pool has one thread per core (two on a small
/// machine). A task that blocks on one of them holds it from every other
/// task meanwhile — timers, handshakes, other peers — so blocking work is
/// handed to a serial Dispatch queue and the caller suspends until it is
/// done. Serial, so calls through one queue keep their order: a ledger
/// commit queued before a Receipt is sent is on disk before it is sent.
package final class BlockingQueue: Sendable {
    private let queue: DispatchQueue

    package init(label: String) {
        queue = DispatchQueue(label: label)
    }

    /// Runs `body` on the queue's thread, after everything queued before it,
    /// and returns what it returned (or throws what it threw).
    package func run<Value: Sendable, Failure: Error>(
        _ body: @escaping @Sendable () throws(Failure) -> Value
    ) async throws(Failure) -> Value {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value, Failure>, Never>) in
            queue.async {
                continuation.resume(returning: Result { () throws(Failure) -> Value in try body() })
            }
        }
        return try result.get()
    }

    /// Queues `body` without waiting for it (its outcome reaches the caller
    /// some other way); it still runs in order with every other call.
    package func async(_ body: @escaping @Sendable () -> Void) {
        queue.async(execute: body)
    }
}
