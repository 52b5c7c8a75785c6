import LFSyncDiscovery

/// One device on an `InMemoryDiscoveryNetwork`; see there for the guarantees.
/// Made by `InMemoryDiscoveryNetwork.makeDiscovery`.
public struct InMemoryDiscovery: Discovery {
    public let network: InMemoryDiscoveryNetwork
    /// What other participants see as this device's host.
    public let host: String
    public let localDeviceID: String?
    public let serviceType: DiscoveryServiceType
    private let participant: UInt64

    init(
        network: InMemoryDiscoveryNetwork, participant: UInt64, host: String, localDeviceID: String?,
        serviceType: DiscoveryServiceType
    ) {
        self.network = network
        self.participant = participant
        self.host = host
        self.localDeviceID = localDeviceID
        self.serviceType = serviceType
    }

    public func events() -> AsyncStream<DiscoveryEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: DiscoveryEvent.self)
        guard let id = network.subscribe(
            participant: participant, serviceType: serviceType, localDeviceID: localDeviceID,
            continuation: continuation)
        else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [network] _ in network.unsubscribe(id) }
        return stream
    }

    public func advertise(_ advertisement: ServiceAdvertisement) async throws(DiscoveryError) -> any AdvertisementHandle {
        try advertisement.validate()
        let (id, name) = try network.advertise(
            advertisement, participant: participant, host: host, serviceType: serviceType)
        return InMemoryAdvertisementHandle(
            advertisement: advertisement, registeredName: name, network: network, id: id)
    }
}
