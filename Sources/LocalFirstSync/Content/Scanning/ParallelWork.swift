import Dispatch
import Synchronization

/// Runs blocking work (file reads, hashing) on `workerCount` threads outside
/// Swift's cooperative pool, which must never block on I/O.
///
/// Each worker pulls the next index from one atomic counter, so big and
/// small items balance across cores without a scheduler.
enum ParallelWork {
    /// Results are written into distinct slots by distinct workers, so the
    /// buffer needs no lock; the box only carries it across the thread hop.
    private final class Slots<Output>: @unchecked Sendable {
        let buffer: UnsafeMutableBufferPointer<Output?>
        let next = Atomic<Int>(0)

        init(count: Int) {
            buffer = .allocate(capacity: count)
            buffer.initialize(repeating: nil)
        }

        deinit {
            buffer.deinitialize()
            buffer.deallocate()
        }
    }

    /// - Parameters:
    ///   - makeScratch: per-worker state (a read buffer) created once per thread.
    ///   - body: processes item `index`; called exactly once per index.
    static func map<Scratch, Output: Sendable>(
        count: Int, workerCount: Int,
        makeScratch: @escaping @Sendable () -> Scratch,
        releaseScratch: @escaping @Sendable (Scratch) -> Void,
        body: @escaping @Sendable (Int, Scratch) -> Output
    ) async -> [Output] {
        guard count > 0 else { return [] }
        let slots = Slots<Output>(count: count)
        let workers = max(1, min(workerCount, count))
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global(qos: .userInitiated).async {
                DispatchQueue.concurrentPerform(iterations: workers) { _ in
                    let scratch = makeScratch()
                    defer { releaseScratch(scratch) }
                    while true {
                        let index = slots.next.wrappingAdd(1, ordering: .relaxed).oldValue
                        guard index < count else { break }
                        slots.buffer[index] = body(index, scratch)
                    }
                }
                continuation.resume()
            }
        }
        return slots.buffer.map { $0! }
    }
}
