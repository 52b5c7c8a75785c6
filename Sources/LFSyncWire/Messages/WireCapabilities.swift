/// Optional features a peer announces in Hello. A feature is used only when
/// both sides announce it; unknown bits are kept and ignored, so a newer peer
/// can add features without a version bump.
package struct WireCapabilities: OptionSet, Hashable, Sendable, CustomStringConvertible {
    package let rawValue: UInt32

    package init(rawValue: UInt32) {
        self.rawValue = rawValue
    }

    /// Bit 0: the peer accepts zstd-compressed Chunk payloads.
    package static let zstd = WireCapabilities(rawValue: 1 << 0)

    /// Bit 1: the peer accepts shared segments — chunk data sealed once for
    /// every peer of a broadcast (PROTOCOL.md, "Shared segments").
    package static let sharedSegments = WireCapabilities(rawValue: 1 << 1)

    /// Bit 2: the peer answers and understands HoldingCheck, HoldingReport, Fetch,
    /// ChunkRequest and ChunkReply (PROTOCOL.md, "Holding checks"); a peer without it is
    /// never sent them.
    package static let holdings = WireCapabilities(rawValue: 1 << 2)

    /// Bit 3: the peer keeps path versions and answers and understands PathStateRequest,
    /// PathStateReport, SyncRequest and SyncReply (PROTOCOL.md, "Path versions"); requires bit 2.
    package static let pathVersions = WireCapabilities(rawValue: 1 << 3)
    /// Everything this build implements.
    package static let supported: WireCapabilities = [.zstd, .sharedSegments, .holdings, .pathVersions]

    package var description: String {
        var names: [String] = []
        if contains(.zstd) { names.append("zstd") }
        if contains(.sharedSegments) { names.append("shared segments") }
        if contains(.holdings) { names.append("holdings") }
        if contains(.pathVersions) { names.append("path versions") }
        let unknown = rawValue & ~Self.supported.rawValue
        if unknown != 0 { names.append("0x" + String(unknown, radix: 16)) }
        return "[" + names.joined(separator: ", ") + "]"
    }
}
