import Synchronization

/// A flag set once and read from any thread or task: "cancelled", "finished",
/// "the deadline fired". A class so escaping closures can share it (`Atomic`
/// itself cannot be captured by them).
package final class AtomicFlag: Sendable {
    private let value = Atomic<Bool>(false)

    package init() {}

    package var isSet: Bool { value.load(ordering: .acquiring) }

    package func set() {
        value.store(true, ordering: .releasing)
    }

    /// Sets the flag; true only for the caller that set it first.
    package func claim() -> Bool {
        !value.exchange(true, ordering: .acquiringAndReleasing)
    }
}
