import Dispatch
import Synchronization

/// Runs blocking, CPU-heavy work (hashing files) on every core, off the
/// cooperative pool. Each worker pulls the next index from one atomic
/// counter, so big and small items balance across cores without a scheduler.
enum ParallelWork {
    private final class Counter: Sendable {
        let next = Atomic<Int>(0)
    }

    /// Calls `body` exactly once for every index in `0..<count`, on up to
    /// `workerCount` threads; returns when all are done. The caller keeps the
    /// results where it likes (one slot per index, written by one worker).
    /// - Parameter makeScratch: per-worker state (a read buffer) created once per thread.
    package static func forEach<Scratch>(
        count: Int, workerCount: Int,
        makeScratch: @escaping @Sendable () -> Scratch,
        releaseScratch: @escaping @Sendable (Scratch) -> Void,
        body: @escaping @Sendable (Int, Scratch) -> Void
    ) async {
        guard count > 0 else { return }
        let counter = Counter()
        let workers = max(1, min(workerCount, count))
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global(qos: .userInitiated).async {
                DispatchQueue.concurrentPerform(iterations: workers) { _ in
                    let scratch = makeScratch()
                    defer { releaseScratch(scratch) }
                    while true {
                        let index = counter.next.wrappingAdd(1, ordering: .relaxed).oldValue
                        guard index < count else { break }
                        body(index, scratch)
                    }
                }
                continuation.resume()
            }
        }
    }
}
