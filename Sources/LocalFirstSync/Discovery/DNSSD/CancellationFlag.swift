import Synchronization

/// Set once by a task-cancellation handler, read by a job on the loop thread.
final class CancellationFlag: Sendable {
    private let flag = Atomic<Bool>(false)

    var isCancelled: Bool { flag.load(ordering: .acquiring) }

    func cancel() {
        flag.store(true, ordering: .releasing)
    }
}
