/// Names a peer in the ledger. Today any stable text; it will carry the
/// peer's Device ID, so the ledger survives address and name changes.
/// Codable as a bare string (through `RawRepresentable`).
package struct PeerKey: RawRepresentable, Hashable, Comparable, Sendable, Codable,
    CustomStringConvertible, ExpressibleByStringLiteral
{
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public init(_ rawValue: String) {
        self.rawValue = rawValue
    }

    public init(stringLiteral value: String) {
        rawValue = value
    }

    public var description: String { rawValue }

    public static func < (lhs: PeerKey, rhs: PeerKey) -> Bool { lhs.rawValue < rhs.rawValue }
}
