import Synchronization
#if LFSYNC_THREAD_SANITIZER
#if canImport(Glibc)
import Glibc
#endif
#endif

#if LFSYNC_THREAD_SANITIZER
/// A value behind a pthread mutex, in the ThreadSanitizer build only (`make test-tsan`).
///
/// Why: on Linux, `Synchronization.Mutex` locks with a futex inside the standard library,
/// which ThreadSanitizer does not see; every access a Mutex orders is then reported as a
/// race (checked: two threads incrementing one `Mutex(0)` a hundred thousand times each
/// are "racing", the same loop under `NSLock` is not). A pthread mutex is intercepted, so
/// under TSan the project's locks are this one and the reports left are real.
package final class LockedState<Value: ~Copyable>: @unchecked Sendable {
    private var value: Value
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

    package init(_ initialValue: consuming sending Value) {
        value = initialValue
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    package func withLock<Result, E: Error>(_ body: (inout sending Value) throws(E) -> sending Result) throws(E) -> sending Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }

    package func withLockIfAvailable<Result, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result? {
        guard pthread_mutex_trylock(mutex) == 0 else { return nil }
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
#else
/// A value behind a lock: `Synchronization.Mutex`, but for the ThreadSanitizer build,
/// which swaps in a pthread mutex TSan can see (see the other branch of this file).
package typealias LockedState<Value: ~Copyable> = Mutex<Value>
#endif
