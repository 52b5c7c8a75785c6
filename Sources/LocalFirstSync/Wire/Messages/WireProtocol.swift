/// Protocol-wide constants of the lfsync wire format (PROTOCOL.md, "Messages").
public enum WireProtocol {
    /// The protocol version this build speaks, sent in Hello. It changes only
    /// for incompatible changes; additions that old peers can ignore travel
    /// as capability bits or new message types instead.
    public static let version: UInt16 = 2

    /// Versions whose Hello (and everything after it) this build can decode.
    public static let supportedVersions: ClosedRange<UInt16> = 2...2

    /// No message payload may exceed this; it equals the default frame limit,
    /// so anything we encode passes a default `FrameDecoder`.
    public static let maxPayloadLength = FrameDecoder.defaultMaxFrameLength
}
