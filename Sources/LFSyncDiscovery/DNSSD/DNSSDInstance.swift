internal import CDNSSD
#if canImport(Glibc)
import Glibc
#endif

/// One browsed service instance on its way to a `.found` event:
/// `DNSServiceResolve` (SRV target, port, TXT), then `DNSServiceQueryRecord`
/// for A and AAAA records of the target.
///
/// Avahi's compat layer has no `DNSServiceGetAddrInfo`, but it implements
/// `DNSServiceQueryRecord`, so addresses come from there. They are collected
/// for a short grace period after the first one (A and AAAA usually arrive
/// together), or until `addressTimeout`; a peer whose addresses never arrive
/// is still reported, with its host name only.
final class DNSSDInstance: DNSSDRefOwner {
    /// Addresses kept per peer; more would only be noise (or an attack).
    package static let maxAddresses = 16
    /// How long to wait for more addresses once the first arrived.
    package static let addressGrace: Duration = .milliseconds(250)

    package let name: String
    /// Browse sightings not yet removed (see `DNSSDBrowseSession`).
    package var sightings = 1
    private(set) var isReported = false

    private weak var session: DNSSDBrowseSession?
    private let type: String
    private let domain: String
    private let interfaceIndex: UInt32
    private var resolveRef: DNSSDServiceRef?
    private var queryRefs: [DNSSDServiceRef] = []
    private var timers: [DNSSDLoopState.TimerID] = []
    private var resolved: (host: String, port: UInt16, txt: DiscoveryTXTRecord)?
    private var addresses: [String] = []
    private var stopped = false

    package init(session: DNSSDBrowseSession, name: String, type: String, domain: String, interfaceIndex: UInt32) {
        self.session = session
        self.name = name
        self.type = type
        self.domain = domain
        self.interfaceIndex = interfaceIndex
    }

    // MARK: Resolve

    package func resolve() {
        guard let session else { return }
        var pointer: DNSServiceRef?
        let context = Unmanaged.passUnretained(self).toOpaque()
        let status = DNSServiceResolve(
            &pointer, 0, interfaceIndex, name, type, domain,
            { sdRef, _, _, errorCode, _, hostTarget, port, txtLength, txtRecord, context in
                guard let context else { return }
                let instance = Unmanaged<DNSSDInstance>.fromOpaque(context).takeUnretainedValue()
                let txt = txtRecord.map { Array(UnsafeBufferPointer(start: $0, count: Int(txtLength))) } ?? []
                instance.resolveReply(
                    sdRef, errorCode: errorCode, hostTarget: DNSSDText.string(hostTarget),
                    port: UInt16(bigEndian: port), txt: txt)
            },
            context)
        // An instance that cannot be resolved is not reported; browsing goes on.
        guard status == DNSSDErrorCode.noError, let pointer else { return }
        resolveRef = session.state.watch(pointer, owner: self)
        timers.append(session.state.schedule(after: session.settings.resolveTimeout) { [weak self] in
            guard let self, let session = self.session else { return }
            session.state.retire(resolveRef)
        })
    }

    private func resolveReply(
        _ sdRef: DNSServiceRef?, errorCode: DNSServiceErrorType, hostTarget: String?, port: UInt16, txt: [UInt8]
    ) {
        guard !stopped, let session, let resolveRef, resolveRef.isActive, resolveRef.matches(sdRef) else { return }
        // The first answer is all we need; avahi would keep the resolver running.
        session.state.retire(resolveRef)
        guard errorCode == DNSSDErrorCode.noError, let hostTarget, !hostTarget.isEmpty, port != 0 else { return }
        let record = DiscoveryTXTRecord(parsing: txt)
        if let deviceID = record.deviceID, session.settings.isOwnDeviceID(deviceID) { return }
        resolved = (hostTarget, port, record)
        queryAddresses(of: hostTarget)
    }

    // MARK: Addresses

    private func queryAddresses(of host: String) {
        guard let session else { return }
        let context = Unmanaged.passUnretained(self).toOpaque()
        for recordType in [kDNSServiceType_A, kDNSServiceType_AAAA] {
            var pointer: DNSServiceRef?
            let status = DNSServiceQueryRecord(
                &pointer, 0, interfaceIndex, host, UInt16(recordType), UInt16(kDNSServiceClass_IN),
                { sdRef, flags, _, errorCode, _, recordType, _, length, data, _, context in
                    guard let context else { return }
                    let instance = Unmanaged<DNSSDInstance>.fromOpaque(context).takeUnretainedValue()
                    let rdata = data.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(length))) } ?? []
                    instance.queryReply(
                        sdRef, flags: flags, errorCode: errorCode, recordType: recordType, rdata: rdata)
                },
                context)
            if status == DNSSDErrorCode.noError, let pointer {
                queryRefs.append(session.state.watch(pointer, owner: self))
            }
        }
        guard !queryRefs.isEmpty else {
            report()
            return
        }
        timers.append(session.state.schedule(after: session.settings.addressTimeout) { [weak self] in
            self?.report()
        })
    }

    private func queryReply(
        _ sdRef: DNSServiceRef?, flags: DNSServiceFlags, errorCode: DNSServiceErrorType, recordType: UInt16,
        rdata: [UInt8]
    ) {
        guard let session, let ref = queryRefs.first(where: { $0.matches(sdRef) }), ref.isActive else { return }
        guard errorCode == DNSSDErrorCode.noError else {
            queryFinished(ref)
            return
        }
        guard flags & DNSServiceFlags(kDNSServiceFlagsAdd) != 0,
              addresses.count < Self.maxAddresses,
              let address = Self.addressText(recordType: recordType, rdata: rdata, interfaceIndex: interfaceIndex),
              !addresses.contains(address)
        else { return }
        addresses.append(address)
        if addresses.count == 1 {
            timers.append(session.state.schedule(after: Self.addressGrace) { [weak self] in self?.report() })
        }
    }

    private func queryFinished(_ ref: DNSSDServiceRef) {
        session?.state.retire(ref)
        if queryRefs.allSatisfy({ !$0.isActive }) { report() }
    }

    package func serviceRef(_ ref: DNSSDServiceRef, failedWith status: DNSServiceErrorType) {
        if ref === resolveRef {
            session?.state.retire(ref)
        } else {
            queryFinished(ref)
        }
    }

    /// Yields `.found` once, with whatever addresses arrived.
    private func report() {
        guard !isReported, !stopped, let session, let resolved else { return }
        isReported = true
        stopQueries()
        let host = resolved.host.hasSuffix(".") ? String(resolved.host.dropLast()) : resolved.host
        session.report(DiscoveredPeer(
            instanceName: name, deviceID: resolved.txt.deviceID, protocolVersion: resolved.txt.protocolVersion,
            host: host, port: resolved.port, addresses: Self.ordered(addresses)))
    }

    private func stopQueries() {
        guard let session else { return }
        for ref in queryRefs { session.state.retire(ref) }
        queryRefs.removeAll()
        for timer in timers { session.state.cancel(timer) }
        timers.removeAll()
    }

    package func stop() {
        guard !stopped else { return }
        stopped = true
        session?.state.retire(resolveRef)
        stopQueries()
    }

    // MARK: Address text

    /// IPv4 first, then routable IPv6, link-local IPv6 last: the order worth trying.
    package static func ordered(_ addresses: [String]) -> [String] {
        func rank(_ address: String) -> Int {
            if !address.contains(":") { return 0 }
            return address.lowercased().hasPrefix("fe80") ? 2 : 1
        }
        return addresses.enumerated()
            .sorted { (rank($0.element), $0.offset) < (rank($1.element), $1.offset) }
            .map(\.element)
    }

    /// The text form of an A or AAAA record; nil for anything of the wrong size.
    /// Link-local IPv6 gets its zone, without which it cannot be connected to.
    package static func addressText(recordType: UInt16, rdata: [UInt8], interfaceIndex: UInt32) -> String? {
        let family: Int32
        switch (Int(recordType), rdata.count) {
        case (kDNSServiceType_A, 4): family = AF_INET
        case (kDNSServiceType_AAAA, 16): family = AF_INET6
        default: return nil
        }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let converted = rdata.withUnsafeBytes { bytes in
            inet_ntop(family, bytes.baseAddress, &buffer, socklen_t(buffer.count - 1))
        }
        guard converted != nil else { return nil }
        var text = Self.string(fromNulTerminated: buffer)
        if family == AF_INET6, rdata[0] == 0xFE, rdata[1] & 0xC0 == 0x80, interfaceIndex > 0 {
            var name = [CChar](repeating: 0, count: Int(IF_NAMESIZE) + 1)
            if if_indextoname(interfaceIndex, &name) != nil {
                text += "%" + Self.string(fromNulTerminated: name)
            }
        }
        return text
    }

    private static func string(fromNulTerminated buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
