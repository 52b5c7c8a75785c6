/// One change in the set of peers a `Discovery` stream sees. See `Discovery`
/// for the ordering and finishing rules.
public enum DiscoveryEvent: Hashable, Sendable {
    /// A peer appeared, or an already reported instance changed (upsert by `instanceName`).
    case found(DiscoveredPeer)
    /// A previously found instance went away (withdrawn, expired, or its network left).
    case lost(instanceName: String)
    /// This discovery mechanism cannot work here (for DNS-SD: no avahi-daemon);
    /// the reason is written for a human. The stream finishes after it.
    case unavailable(reason: String)
}
