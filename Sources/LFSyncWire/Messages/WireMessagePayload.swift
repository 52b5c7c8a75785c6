import LFSyncSystem

/// What every message struct implements; `WireMessage` dispatches on it.
///
/// Decoders read with limits checked before allocation; the caller
/// (`WireMessage.init(frame:)`) then insists the payload was consumed exactly.
/// Encoders check the same limits, so we never send what a peer must refuse.
protocol WireMessagePayload: Hashable, Sendable {
    static var messageType: WireMessageType { get }
    func encode(into writer: inout ByteWriter) throws(WireError)
    init(from reader: inout ByteReader) throws(WireError)
}

extension WireMessagePayload {
    /// Runs structural reads, reporting failures as `malformed` for this type.
    package static func decoding<T>(_ body: () throws(ByteReaderError) -> T) throws(WireError) -> T {
        do throws(ByteReaderError) {
            return try body()
        } catch {
            throw .malformed(messageType, error)
        }
    }

    /// Runs pre-encoding checks, reporting failures as `unencodable` for this type.
    package static func checking(_ body: () throws(ByteReaderError) -> Void) throws(WireError) {
        do throws(ByteReaderError) {
            try body()
        } catch {
            throw .unencodable(messageType, error.description)
        }
    }
}
