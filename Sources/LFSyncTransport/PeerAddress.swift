/// Where a peer can be reached: a host (name, IPv4 or IPv6 literal) and a TCP port.
///
/// A value type rather than a `sockaddr` so the layers above the transport (discovery, the
/// engine, the CLI's `--to host:port`) can store, compare and print addresses without
/// touching C types. Resolution to socket addresses happens inside the transport, where it
/// can be time-boxed and kept off the cooperative thread pool.
public struct PeerAddress: Hashable, Sendable, CustomStringConvertible {
    /// A host name or an IP literal, IPv6 literals without brackets (`::1`, `fe80::1%eth0`).
    public var host: String
    /// The TCP port; 0 asks `listen(on:)` for an ephemeral port.
    public var port: UInt16

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// Parses `host:port` or `[ipv6]:port`, as a user types it on a command line.
    ///
    /// Returns nil for anything ambiguous or malformed: a bare IPv6 literal without brackets
    /// (is `::1:80` port 80 of `::1` or the address `::1:80`?), an empty host, a missing,
    /// non-numeric or out-of-range port, or whitespace and control characters.
    public init?(parsing text: String) {
        guard !text.isEmpty, text.utf8.count <= 1024,
              !text.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.value < 0x20 || $0.value == 0x7F })
        else { return nil }
        let host: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { return nil }
            portText = rest.dropFirst()
            guard host.contains(":"), !host.contains("[") else { return nil }
        } else {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
            // A second colon means an unbracketed IPv6 literal: ambiguous, so refused.
            guard !host.contains(":"), !host.contains("["), !host.contains("]") else { return nil }
        }
        guard !host.isEmpty, !portText.isEmpty, portText.utf8.count <= 5,
              portText.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
              let port = UInt16(portText)
        else { return nil }
        self.init(host: String(host), port: port)
    }

    /// `host:port`, with brackets around IPv6 literals so the text parses back to the same value.
    public var description: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}
