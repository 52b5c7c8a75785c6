/// The discovery seam: how a device learns which peers are nearby and how it
/// lets others find it.
///
/// Three implementations share it: `DNSSDDiscovery` (multicast DNS-SD through
/// avahi), `StaticDiscovery` (fixed `host:port` peers from configuration) and
/// `InMemoryDiscovery` (a deterministic in-process network for tests);
/// `MergedDiscovery` combines several. Discovery is only a hint: it is
/// spoofable, so the engine must check the Noise static key of every
/// connection against the device ID it expected.
///
/// Event semantics, the same for every implementation:
/// - `.found` is an upsert keyed by `instanceName`: a second `.found` for the
///   same name replaces the first (a peer that moved or changed addresses).
/// - `.lost` names an instance that was reported `.found` earlier on the same stream.
/// - `.unavailable` means this mechanism cannot discover anything; on a single
///   implementation's stream it is the last event and the stream finishes.
///   `MergedDiscovery` forwards it and keeps the other members running.
/// - Otherwise a stream runs until its consumer stops iterating (or drops it),
///   which releases everything the stream holds.
///
/// Peers whose device ID equals the implementation's configured local device
/// ID, or the ID of an advertisement made through the same object, are not
/// reported: a device never discovers itself.
public protocol Discovery: Sendable {
    /// A fresh, independent stream of discovery events; each call browses on its own.
    func events() -> AsyncStream<DiscoveryEvent>

    /// Makes this device findable until the returned handle is cancelled or
    /// released. Returns once the advertisement is confirmed (for DNS-SD: the
    /// daemon established the records), with the name actually registered.
    func advertise(_ advertisement: ServiceAdvertisement) async throws(DiscoveryError) -> any AdvertisementHandle
}
