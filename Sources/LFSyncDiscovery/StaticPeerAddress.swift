#if canImport(Glibc)
import Glibc
#endif

/// A configured peer address, `host:port` or `[ipv6]:port`, optionally pinned
/// to the device ID expected there.
///
/// Without a pinned ID the device is unknown until the handshake, so the
/// engine must ask (or consult its trust list) before sending anything.
public struct StaticPeerAddress: Hashable, Sendable, CustomStringConvertible {
    /// A DNS name is at most 253 characters in text form.
    public static let maxHostBytes = 253

    public var host: String
    public var port: UInt16
    public var deviceID: String?

    public init(host: String, port: UInt16, deviceID: String? = nil) {
        self.host = host
        self.port = port
        self.deviceID = deviceID
    }

    /// Parses `host:port`, `1.2.3.4:port` or `[::1]:port` (IPv6 needs the
    /// brackets, as in URLs, because of its colons). Surrounding white space
    /// is ignored; everything else must be valid.
    public init(parsing text: String, deviceID: String? = nil) throws(DiscoveryError) {
        let trimmed = Self.trimmingWhiteSpace(text)
        let hostPart: Substring
        let portPart: Substring
        if trimmed.hasPrefix("[") {
            guard let close = trimmed.firstIndex(of: "]") else {
                throw .invalidPeerAddress("\"\(trimmed)\": missing \"]\" after the IPv6 address")
            }
            hostPart = trimmed[trimmed.index(after: trimmed.startIndex)..<close]
            let afterBracket = trimmed[trimmed.index(after: close)...]
            guard afterBracket.hasPrefix(":") else {
                throw .invalidPeerAddress("\"\(trimmed)\": expected [address]:port")
            }
            portPart = afterBracket.dropFirst()
            guard Self.isIPv6Literal(hostPart) else {
                throw .invalidPeerAddress("\"\(hostPart)\" is not an IPv6 address")
            }
        } else {
            guard let colon = trimmed.lastIndex(of: ":") else {
                throw .invalidPeerAddress("\"\(trimmed)\": expected host:port")
            }
            hostPart = trimmed[..<colon]
            portPart = trimmed[trimmed.index(after: colon)...]
            guard !hostPart.contains(":") else {
                throw .invalidPeerAddress("\"\(trimmed)\": write IPv6 addresses in brackets, e.g. [fe80::1%eth0]:7000")
            }
            guard Self.isIPv4Literal(hostPart) || Self.isHostName(hostPart) else {
                throw .invalidPeerAddress("\"\(hostPart)\" is not a host name or IPv4 address")
            }
        }
        guard let port = Self.port(portPart) else {
            throw .invalidPeerAddress("\"\(portPart)\" is not a port (1-65535)")
        }
        self.init(host: String(hostPart), port: port, deviceID: deviceID)
    }

    public var description: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// How discovery reports it: keyed by the address text, the host itself
    /// as the address when it is numeric.
    package var discoveredPeer: DiscoveredPeer {
        let numeric = Self.isIPv4Literal(host[...]) || Self.isIPv6Literal(host[...])
        return DiscoveredPeer(
            instanceName: description, deviceID: deviceID, protocolVersion: nil,
            host: host, port: port, addresses: numeric ? [host] : [])
    }

    // MARK: Validation

    private static func port(_ text: Substring) -> UInt16? {
        guard (1...5).contains(text.utf8.count), text.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
              let value = UInt16(text), value > 0
        else { return nil }
        return value
    }

    package static func isIPv4Literal(_ text: Substring) -> Bool {
        var address = in_addr()
        return text.utf8.count <= 15 && inet_pton(AF_INET, String(text), &address) == 1
    }

    /// An IPv6 literal, optionally with a zone (`fe80::1%eth0`), which link-local addresses need.
    package static func isIPv6Literal(_ text: Substring) -> Bool {
        let parts = text.split(separator: "%", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = parts.first, address.utf8.count <= 45 else { return false }
        if parts.count == 2 {
            let zone = parts[1]
            guard (1...15).contains(zone.utf8.count),
                  zone.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "%") })
            else { return false }
        }
        var storage = in6_addr()
        return inet_pton(AF_INET6, String(address), &storage) == 1
    }

    private static func trimmingWhiteSpace(_ text: String) -> Substring {
        guard let first = text.firstIndex(where: { !$0.isWhitespace }),
              let last = text.lastIndex(where: { !$0.isWhitespace })
        else { return "" }
        return text[first...last]
    }

    /// RFC 1123 host names (letters, digits, hyphens; labels of 1-63), plus
    /// `_` which some local setups use, and an optional trailing dot.
    package static func isHostName(_ text: Substring) -> Bool {
        var name = text
        if name.hasSuffix(".") { name = name.dropLast() }
        guard (1...maxHostBytes).contains(name.utf8.count) else { return false }
        return name.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
            let bytes = label.utf8
            guard (1...63).contains(bytes.count), bytes.first != UInt8(ascii: "-"), bytes.last != UInt8(ascii: "-")
            else { return false }
            return bytes.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            }
        }
    }
}
