/// A DNS-SD service type such as `_lfsync._tcp`, checked against RFC 6335 §5.1.
///
/// Configuration may name it short (`lfsync`), which is how people write it;
/// the type is always TCP because lfsync speaks only TCP.
public struct DiscoveryServiceType: Hashable, Sendable, CustomStringConvertible {
    /// The default `_lfsync._tcp`.
    public static let lfsync = DiscoveryServiceType(validated: "lfsync")

    /// The bare service name, e.g. `lfsync`.
    public let name: String

    /// The DNS-SD form, e.g. `_lfsync._tcp`.
    public var description: String { "_\(name)._tcp" }

    /// Accepts `lfsync`, `_lfsync`, `_lfsync._tcp` and `_lfsync._tcp.`.
    public init(_ text: String) throws(DiscoveryError) {
        var name = Substring(text)
        if name.hasSuffix(".") { name = name.dropLast() }
        if name.hasSuffix("._tcp") { name = name.dropLast(5) }
        if name.hasPrefix("_") { name = name.dropFirst() }
        let scalars = name.unicodeScalars
        // RFC 6335: 1-15 of letters, digits and hyphens, at least one letter,
        // no hyphen at either end and no two in a row.
        guard (1...15).contains(scalars.count),
              scalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-") }),
              scalars.contains(where: { $0.properties.isAlphabetic }),
              scalars.first != "-", scalars.last != "-", !name.contains("--")
        else {
            throw .invalidAdvertisement(
                "\"\(text)\" is not a DNS-SD service name (1-15 letters, digits or inner hyphens, e.g. _lfsync._tcp)")
        }
        // DNS names compare case-insensitively; one spelling keeps equality simple.
        self.name = String(name).lowercased()
    }

    private init(validated name: String) {
        self.name = name
    }
}
