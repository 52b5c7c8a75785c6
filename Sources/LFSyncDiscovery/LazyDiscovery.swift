import Synchronization
import LFSyncSystem

/// A discovery made on first use. `LocalSync` defaults to DNS-SD, and creating
/// that (a libdns_sd thread, avahi's environment) is not free: an engine that
/// only sends to a pinned address, or a test on the in-memory network, should
/// never pay for it.
package final class LazyDiscovery: Discovery {
    private let make: @Sendable () -> any Discovery
    private let made = LockedState<(any Discovery)?>(nil)

    package init(_ make: @escaping @Sendable () -> any Discovery) {
        self.make = make
    }

    private var resolved: any Discovery {
        made.withLock { made in
            if let made { return made }
            let discovery = make()
            made = discovery
            return discovery
        }
    }

    package func events() -> AsyncStream<DiscoveryEvent> {
        resolved.events()
    }

    package func advertise(_ advertisement: ServiceAdvertisement) async throws(DiscoveryError) -> any AdvertisementHandle {
        try await resolved.advertise(advertisement)
    }
}
