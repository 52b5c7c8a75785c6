#if canImport(Glibc)
import Glibc
#endif
import Foundation
import LFSyncTransport

/// Turns a `PeerAddress` into socket addresses without blocking the cooperative pool.
///
/// IP literals are converted inline (`AI_NUMERICHOST` never touches the network). Names go
/// to `getaddrinfo` on a short-lived thread of their own, because it blocks (DNS, mDNS via
/// nss-mdns can take seconds); the caller waits on a reactor deadline and a late answer is
/// simply dropped.
enum NameResolver {
    package static func resolve(_ address: PeerAddress, passive: Bool, deadline: MonotonicInstant,
                        reactor: EpollReactor) async throws(TransportError) -> [SocketAddress] {
        guard !address.host.isEmpty, !address.host.utf8.contains(0) else {
            throw .invalidAddress("empty host in \(address)")
        }
        switch lookup(address, passive: passive, numericOnly: true) {
        case .success(let addresses): return addresses
        case .failure(.nameResolutionFailed) where !looksNumeric(address.host): break
        case .failure(let error): throw error
        }
        let wait = ReactorWait<Result<[SocketAddress], TransportError>>(deadline: deadline)
        let registration = try reactor.register(fd: -1)
        registration.attach(wait)
        defer { registration.cancel() }
        let thread = Thread { wait.finish(.completed(lookup(address, passive: passive, numericOnly: false))) }
        thread.name = "lfsync-resolve"
        thread.start()
        switch await wait.wait(on: registration, for: nil) {
        case .completed(let result): return try result.get()
        case .timedOut: throw .timedOut(.connect)
        case .cancelled: throw .cancelled
        case .ready: throw .timedOut(.connect)  // not armed for readiness; unreachable
        }
    }

    /// Digits, dots, colons, hex and `%scope`: text a user meant as an IP literal, so a
    /// malformed one is reported as invalid rather than looked up in DNS.
    private static func looksNumeric(_ host: String) -> Bool {
        host.contains(":") || host.allSatisfy { $0.isNumber || $0 == "." }
    }

    private static func lookup(_ address: PeerAddress, passive: Bool, numericOnly: Bool) -> Result<[SocketAddress], TransportError> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_protocol = Int32(IPPROTO_TCP)
        hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0) | (numericOnly ? AI_NUMERICHOST : 0)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(address.host, String(address.port), &hints, &list)
        guard status == 0 else {
            if numericOnly && status == EAI_NONAME && looksNumeric(address.host) {
                return .failure(.invalidAddress("\(address.host) is not a valid IP address"))
            }
            let reason = status == EAI_SYSTEM ? String(cString: strerror(errno)) : String(cString: gai_strerror(status))
            return .failure(.nameResolutionFailed(host: address.host, reason: reason))
        }
        defer { freeaddrinfo(list) }
        var addresses: [SocketAddress] = []
        var cursor = list
        while let entry = cursor {
            if let socketAddress = entry.pointee.ai_addr, let resolved = SocketAddress(socketAddress, length: entry.pointee.ai_addrlen),
               resolved.family == AF_INET || resolved.family == AF_INET6 {
                addresses.append(resolved)
            }
            cursor = entry.pointee.ai_next
        }
        guard !addresses.isEmpty else {
            return .failure(.nameResolutionFailed(host: address.host, reason: "no IPv4 or IPv6 address"))
        }
        return .success(addresses)
    }
}
