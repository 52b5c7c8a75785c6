import LFSyncSystem

/// The trust policy a running engine and all its sessions share, replaced
/// whole when the user changes it (`LocalSync.updateTrust(_:)`).
final class CurrentTrust: Sendable {
    private let state: LockedState<TrustPolicy>

    init(_ policy: TrustPolicy) {
        state = LockedState(policy)
    }

    var policy: TrustPolicy { state.withLock { $0 } }

    /// - Returns: the policy it replaced.
    func replace(with policy: TrustPolicy) -> TrustPolicy {
        state.withLock { current in
            defer { current = policy }
            return current
        }
    }
}
