internal import CDNSSD

/// One `events()` stream: a `DNSServiceBrowse` ref plus one `DNSSDInstance`
/// (resolve, then address queries) per service instance seen.
///
/// Avahi reports an instance once per interface and IP protocol it was seen
/// on, and removes it the same way, so each instance counts its sightings and
/// is lost only when the last one goes.
final class DNSSDBrowseSession: DNSSDSession, DNSSDRefOwner {
    package struct Settings: Sendable {
        var serviceType: String
        var resolveTimeout: Duration
        var addressTimeout: Duration
        /// Whether a device ID is our own (configured, or one we advertise right now).
        var isOwnDeviceID: @Sendable (String) -> Bool
    }

    /// Instances tracked at once; a flood of fake services cannot grow memory further.
    package static let maxInstances = 256

    package let settings: Settings
    package let state: DNSSDLoopState
    private let id: DNSSDLoopState.SessionID
    private let continuation: AsyncStream<DiscoveryEvent>.Continuation
    private var ref: DNSSDServiceRef?
    private var instances: [String: DNSSDInstance] = [:]
    private var stopped = false

    package init(
        id: DNSSDLoopState.SessionID, state: DNSSDLoopState, settings: Settings,
        continuation: AsyncStream<DiscoveryEvent>.Continuation
    ) {
        self.id = id
        self.state = state
        self.settings = settings
        self.continuation = continuation
    }

    package func start() {
        var pointer: DNSServiceRef?
        let context = Unmanaged.passUnretained(self).toOpaque()
        // A nil domain browses the default domain (local.); avahi accepts no flags here.
        let status = DNSServiceBrowse(
            &pointer, 0, 0, settings.serviceType, nil,
            { sdRef, flags, interfaceIndex, errorCode, name, type, domain, context in
                guard let context else { return }
                let session = Unmanaged<DNSSDBrowseSession>.fromOpaque(context).takeUnretainedValue()
                session.browseReply(
                    sdRef, flags: flags, interfaceIndex: interfaceIndex, errorCode: errorCode,
                    name: DNSSDText.string(name), type: DNSSDText.string(type), domain: DNSSDText.string(domain))
            },
            context)
        guard status == DNSSDErrorCode.noError, let pointer else {
            fail(status)
            return
        }
        ref = state.watch(pointer, owner: self)
        state.add(self, id: id)
    }

    private func browseReply(
        _ sdRef: DNSServiceRef?, flags: DNSServiceFlags, interfaceIndex: UInt32, errorCode: DNSServiceErrorType,
        name: String?, type: String?, domain: String?
    ) {
        guard let ref, ref.isActive, ref.matches(sdRef) else { return }
        guard errorCode == DNSSDErrorCode.noError else {
            fail(errorCode)
            return
        }
        guard let name, let type, let domain, !name.isEmpty else { return }
        if flags & DNSServiceFlags(kDNSServiceFlagsAdd) != 0 {
            if let instance = instances[name] {
                instance.sightings += 1
                return
            }
            guard instances.count < Self.maxInstances else { return }
            let instance = DNSSDInstance(
                session: self, name: name, type: type, domain: domain, interfaceIndex: interfaceIndex)
            instances[name] = instance
            instance.resolve()
        } else {
            guard let instance = instances[name] else { return }
            instance.sightings -= 1
            guard instance.sightings <= 0 else { return }
            instances[name] = nil
            let wasReported = instance.isReported
            instance.stop()
            if wasReported { continuation.yield(.lost(instanceName: name)) }
        }
    }

    /// Called by an instance once it is resolved (and its addresses collected).
    package func report(_ peer: DiscoveredPeer) {
        guard !stopped else { return }
        continuation.yield(.found(peer))
    }

    package func serviceRef(_ ref: DNSSDServiceRef, failedWith status: DNSServiceErrorType) {
        fail(status)
    }

    private func fail(_ status: DNSServiceErrorType) {
        guard !stopped else { return }
        continuation.yield(.unavailable(reason: DNSSDErrorCode.unavailableReason(status)))
        stop()
    }

    package func stop() {
        guard !stopped else { return }
        stopped = true
        state.retire(ref)
        for instance in instances.values { instance.stop() }
        instances.removeAll()
        state.remove(sessionID: id)
        continuation.finish()
    }
}
