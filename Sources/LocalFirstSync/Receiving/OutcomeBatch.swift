import Synchronization
import LFSyncSystem

/// Outcomes reported by threads of their own (writes, verifications,
/// installs), collected by the receiving actor in batches: a burst of a
/// thousand small files landing costs the actor one wake-up, not a thousand
/// tasks each hopping onto it.
final class OutcomeBatch<Outcome: Sendable>: Sendable {
    private let outcomes = LockedState<[Outcome]>([])

    /// Adds `outcome`. True when it is the first since the last `takeAll()`:
    /// only then must the collector be woken — a wake-up already on its way
    /// collects this one too.
    func add(_ outcome: Outcome) -> Bool {
        outcomes.withLock { outcomes in
            outcomes.append(outcome)
            return outcomes.count == 1
        }
    }

    /// Everything added since the last call, in the order added.
    func takeAll() -> [Outcome] {
        outcomes.withLock { outcomes in
            defer { outcomes = [] }
            return outcomes
        }
    }
}
