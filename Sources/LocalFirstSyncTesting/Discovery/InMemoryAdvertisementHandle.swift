import Synchronization
import LFSyncDiscovery

/// Withdraws from the in-memory network on `cancel()` or release.
final class InMemoryAdvertisementHandle: AdvertisementHandle {
    let advertisement: ServiceAdvertisement
    let registeredName: String
    private let network: InMemoryDiscoveryNetwork
    private let id: UInt64
    private let withdrawn = Atomic<Bool>(false)

    init(advertisement: ServiceAdvertisement, registeredName: String, network: InMemoryDiscoveryNetwork, id: UInt64) {
        self.advertisement = advertisement
        self.registeredName = registeredName
        self.network = network
        self.id = id
    }

    func cancel() async {
        withdraw()
    }

    private func withdraw() {
        guard !withdrawn.exchange(true, ordering: .acquiringAndReleasing) else { return }
        network.withdraw(id)
    }

    deinit {
        withdraw()
    }
}
