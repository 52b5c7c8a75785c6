import Synchronization
import LFSyncDiscovery
import LFSyncSystem

/// A simulated local network for discovery: every `InMemoryDiscovery` made
/// from the same network sees the others' advertisements.
///
/// Deterministic by construction: every change is applied and delivered to
/// all streams under one lock, so each stream sees changes in the order they
/// happened, and a new stream first gets the current advertisements in the
/// order they were made. `makeUnavailable` simulates a dead avahi-daemon.
public final class InMemoryDiscoveryNetwork: Sendable {
    private struct Advertisement {
        let id: UInt64
        let participant: UInt64
        let serviceType: DiscoveryServiceType
        let peer: DiscoveredPeer
    }

    private struct Subscriber {
        let participant: UInt64
        let serviceType: DiscoveryServiceType
        let localDeviceID: String?
        let continuation: AsyncStream<DiscoveryEvent>.Continuation

        /// Never our own advertisements, never our own device, only our service type.
        func sees(_ advertisement: Advertisement) -> Bool {
            advertisement.participant != participant && advertisement.serviceType == serviceType
                && (localDeviceID == nil || advertisement.peer.deviceID != localDeviceID)
        }
    }

    private struct State {
        var advertisements: [Advertisement] = []
        var subscribers: [UInt64: Subscriber] = [:]
        var unavailableReason: String?
        var lastID: UInt64 = 0

        mutating func nextID() -> UInt64 {
            lastID += 1
            return lastID
        }
    }

    private let state = LockedState(State())

    public init() {}

    /// A participant: one simulated device. `host` is what others see as its
    /// address (in-memory transports use it as the connection key).
    public func makeDiscovery(
        host: String? = nil, localDeviceID: String? = nil, serviceType: DiscoveryServiceType = .lfsync
    ) -> InMemoryDiscovery {
        let participant = state.withLock { $0.nextID() }
        return InMemoryDiscovery(
            network: self, participant: participant, host: host ?? "participant-\(participant)",
            localDeviceID: localDeviceID, serviceType: serviceType)
    }

    /// Instance names currently advertised (all service types), sorted; for assertions.
    public var advertisedNames: [String] {
        state.withLock { $0.advertisements.map(\.peer.instanceName).sorted() }
    }

    /// Open streams; for tests that check dropped streams unsubscribe.
    var subscriberCount: Int {
        state.withLock { $0.subscribers.count }
    }

    /// Like an avahi-daemon dying: every open stream gets `.unavailable(reason)`
    /// and finishes, new streams do the same, and `advertise` throws.
    /// Existing advertisements stay registered for when the network comes back.
    public func makeUnavailable(reason: String) {
        let finished = state.withLock { state -> [AsyncStream<DiscoveryEvent>.Continuation] in
            state.unavailableReason = reason
            let continuations = state.subscribers.sorted { $0.key < $1.key }.map(\.value.continuation)
            state.subscribers.removeAll()
            for continuation in continuations { continuation.yield(.unavailable(reason: reason)) }
            return continuations
        }
        // Outside the lock: finishing runs termination handlers, which take it.
        for continuation in finished { continuation.finish() }
    }

    public func makeAvailable() {
        state.withLock { $0.unavailableReason = nil }
    }

    // MARK: Participants' operations

    func subscribe(
        participant: UInt64, serviceType: DiscoveryServiceType, localDeviceID: String?,
        continuation: AsyncStream<DiscoveryEvent>.Continuation
    ) -> UInt64? {
        state.withLock { state -> UInt64? in
            if let reason = state.unavailableReason {
                continuation.yield(.unavailable(reason: reason))
                return nil
            }
            let id = state.nextID()
            let subscriber = Subscriber(
                participant: participant, serviceType: serviceType, localDeviceID: localDeviceID,
                continuation: continuation)
            state.subscribers[id] = subscriber
            for advertisement in state.advertisements where subscriber.sees(advertisement) {
                continuation.yield(.found(advertisement.peer))
            }
            return id
        }
    }

    func unsubscribe(_ id: UInt64) {
        _ = state.withLock { $0.subscribers.removeValue(forKey: id) }
    }

    /// Registers `advertisement`, renaming on a conflict the way avahi does
    /// (`name`, `name #2`, `name #3`, ...), and tells everyone who can see it.
    func advertise(
        _ advertisement: ServiceAdvertisement, participant: UInt64, host: String, serviceType: DiscoveryServiceType
    ) throws(DiscoveryError) -> (id: UInt64, registeredName: String) {
        try state.withLock { state throws(DiscoveryError) -> (id: UInt64, registeredName: String) in
            if let reason = state.unavailableReason { throw .unavailable(reason: reason) }
            let taken = Set(state.advertisements.filter { $0.serviceType == serviceType }.map(\.peer.instanceName))
            var name = advertisement.instanceName
            var suffix = 2
            while taken.contains(name) {
                name = "\(advertisement.instanceName) #\(suffix)"
                suffix += 1
            }
            let entry = Advertisement(
                id: state.nextID(), participant: participant, serviceType: serviceType,
                peer: DiscoveredPeer(
                    instanceName: name, deviceID: advertisement.deviceID,
                    protocolVersion: advertisement.protocolVersion, host: host, port: advertisement.port))
            state.advertisements.append(entry)
            for subscriber in state.subscribers.sorted(by: { $0.key < $1.key }).map(\.value)
            where subscriber.sees(entry) {
                subscriber.continuation.yield(.found(entry.peer))
            }
            return (entry.id, name)
        }
    }

    func withdraw(_ id: UInt64) {
        state.withLock { state in
            guard let index = state.advertisements.firstIndex(where: { $0.id == id }) else { return }
            let entry = state.advertisements.remove(at: index)
            for subscriber in state.subscribers.sorted(by: { $0.key < $1.key }).map(\.value)
            where subscriber.sees(entry) {
                subscriber.continuation.yield(.lost(instanceName: entry.peer.instanceName))
            }
        }
    }
}
