#if canImport(Glibc)
import Glibc
#endif

/// What strangers' connections are counted by: an IPv4 address as it is, an
/// IPv6 address by its /64 prefix. Why: one IPv6 host holds a whole /64 and
/// can connect from a new address each time (privacy addresses make that
/// routine), so counting by address would give it as many slots as it likes.
enum SourceNetwork {
    static func of(_ host: String) -> String {
        var address = in6_addr()
        // A zone (fe80::1%eth0) names the interface, not the network.
        let bare = host.split(separator: "%", maxSplits: 1).first.map(String.init) ?? host
        guard bare.contains(":"), inet_pton(AF_INET6, bare, &address) == 1 else { return host }
        let bytes = withUnsafeBytes(of: &address) { Array($0) }
        // An IPv4-mapped address (::ffff:a.b.c.d) is that IPv4 address.
        if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
            return bytes[12...].map(String.init).joined(separator: ".")
        }
        let groups = stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
        return groups.joined(separator: ":") + "::/64"
    }
}
