import LFSyncSystem

/// Discovery over multicast DNS-SD through avahi's Bonjour compatibility
/// library (libdns_sd), so it needs a running avahi-daemon (which needs the
/// system D-Bus).
///
/// - `advertise` registers `<instance>._lfsync._tcp.local.` with the TXT
///   record described in `DiscoveryTXTRecord` (`id`, `v`).
/// - `events()` browses, resolves each instance (SRV target, port, TXT) and
///   queries the target's A/AAAA records, then yields `.found`; `.lost`
///   follows when the instance is withdrawn or expires.
/// - Without a daemon, `events()` yields one `.unavailable` and finishes, and
///   `advertise` throws `.unavailable` — at once, never hanging: combine with
///   `StaticDiscovery` (see `MergedDiscovery`) so configured peers keep working.
///
/// All libdns_sd work runs on one dedicated thread (`DNSSDEventLoop`), never
/// on a cooperative thread. Copies of this object share that thread.
public final class DNSSDDiscovery: Discovery {
    public struct Configuration: Sendable {
        public var serviceType: DiscoveryServiceType
        /// This device's ID: peers advertising it are not reported (another
        /// lfsync process of this device, e.g. `serve` while `push` browses).
        public var localDeviceID: String?
        /// How long `advertise` waits for avahi to confirm the records.
        public var registrationTimeout: Duration
        /// How long an instance may take to resolve before it is ignored.
        public var resolveTimeout: Duration
        /// How long to wait for a resolved peer's addresses before reporting it without.
        public var addressTimeout: Duration

        public init(
            serviceType: DiscoveryServiceType = .lfsync, localDeviceID: String? = nil,
            registrationTimeout: Duration = .seconds(15), resolveTimeout: Duration = .seconds(10),
            addressTimeout: Duration = .seconds(3)
        ) {
            self.serviceType = serviceType
            self.localDeviceID = localDeviceID
            self.registrationTimeout = registrationTimeout
            self.resolveTimeout = resolveTimeout
            self.addressTimeout = addressTimeout
        }
    }

    public let configuration: Configuration
    let loop = DNSSDEventLoop()
    private let advertisedDeviceIDs = DeviceIDCounter()

    public init(configuration: Configuration = Configuration()) {
        DNSSDEnvironment.prepare()
        self.configuration = configuration
    }

    public func events() -> AsyncStream<DiscoveryEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: DiscoveryEvent.self)
        let id = loop.makeID()
        let localDeviceID = configuration.localDeviceID
        let settings = DNSSDBrowseSession.Settings(
            serviceType: configuration.serviceType.description,
            resolveTimeout: configuration.resolveTimeout,
            addressTimeout: configuration.addressTimeout,
            isOwnDeviceID: { [advertisedDeviceIDs] deviceID in
                deviceID == localDeviceID || advertisedDeviceIDs.contains(deviceID)
            })
        // Set before the start job is queued, so a stream dropped at once is
        // still stopped (the stop job runs after the start job).
        continuation.onTermination = { [loop] _ in
            loop.submit { state in state.stopSession(id) }
        }
        loop.submit { state in
            DNSSDBrowseSession(id: id, state: state, settings: settings, continuation: continuation).start()
        }
        return stream
    }

    public func advertise(_ advertisement: ServiceAdvertisement) async throws(DiscoveryError) -> any AdvertisementHandle {
        try advertisement.validate()
        let txt = try DiscoveryTXTRecord(
            deviceID: advertisement.deviceID, protocolVersion: advertisement.protocolVersion
        ).encoded()
        let id = loop.makeID()
        let serviceType = configuration.serviceType.description
        let timeout = configuration.registrationTimeout
        let cancellation = AtomicFlag()
        advertisedDeviceIDs.insert(advertisement.deviceID)
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<String, DiscoveryError>, Never>) in
                loop.submit { state in
                    // Cancelled before the job ran: the stop job may already have
                    // come and gone, so never start.
                    guard !cancellation.isSet else {
                        continuation.resume(returning: .failure(.cancelled))
                        return
                    }
                    DNSSDRegistration(
                        id: id, state: state, requestedName: advertisement.instanceName,
                        completion: { continuation.resume(returning: $0) }
                    ).start(serviceType: serviceType, port: advertisement.port, txt: txt, timeout: timeout)
                }
            }
        } onCancel: { [loop] in
            cancellation.set()
            loop.submit { state in state.stopSession(id) }
        }
        switch result {
        case let .success(registeredName):
            let handle = DNSSDAdvertisementHandle(
                advertisement: advertisement, registeredName: registeredName, loop: loop, sessionID: id,
                release: { [advertisedDeviceIDs] in advertisedDeviceIDs.remove(advertisement.deviceID) })
            // Cancelled just as the registration was confirmed: the stop job may
            // already have withdrawn it, so a cancelled call never returns a handle.
            if cancellation.isSet {
                await handle.cancel()
                throw .cancelled
            }
            return handle
        case let .failure(error):
            advertisedDeviceIDs.remove(advertisement.deviceID)
            throw error
        }
    }
}
