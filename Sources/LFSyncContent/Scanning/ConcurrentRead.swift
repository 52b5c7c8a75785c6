import Dispatch
import Synchronization
import LFSyncSystem

/// Blocking work started on another thread now and collected later, for two
/// blocking reads that do not depend on each other: the scanner walks the
/// library's folders while the scan cache's rows are read beside it.
final class ConcurrentRead<Value: Sendable>: Sendable {
    private let result = LockedState<Result<Value, any Error>?>(nil)
    private let done = DispatchSemaphore(value: 0)

    init(_ work: @escaping @Sendable () throws -> Value) {
        DispatchQueue.global(qos: .userInitiated).async { [self] in
            let outcome = Result { try work() }
            result.withLock { $0 = outcome }
            done.signal()
        }
    }

    /// Waits for the work to finish (blocking the calling thread) and returns what it returned.
    func value() throws -> Value {
        done.wait()
        done.signal()  // a second call returns at once
        return try result.withLock { $0! }.get()
    }
}
