/// Optional features a peer announces in Hello. A feature is used only when
/// both sides announce it; unknown bits are kept and ignored, so a newer peer
/// can add features without a version bump.
public struct WireCapabilities: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt32

    public init(rawValue: UInt32) {
        self.rawValue = rawValue
    }

    /// Bit 0: the peer accepts zstd-compressed Chunk payloads.
    public static let zstd = WireCapabilities(rawValue: 1 << 0)

    /// Everything this build implements.
    public static let supported: WireCapabilities = [.zstd]

    public var description: String {
        var names: [String] = []
        if contains(.zstd) { names.append("zstd") }
        let unknown = rawValue & ~Self.supported.rawValue
        if unknown != 0 { names.append("0x" + String(unknown, radix: 16)) }
        return "[" + names.joined(separator: ", ") + "]"
    }
}
