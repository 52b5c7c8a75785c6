import Dispatch
import LFSyncCrypto
import LFSyncSystem
import LFSyncTransport
import LFSyncWire

/// The `channel` fuzz target. Random bytes never get past a Noise tag, so the
/// input is read as a script of what a sender (honest or not) could put on
/// the wire, and the harness seals it with a key both ends know:
///
/// - `0`: a transport message of the next `n` plaintext bytes;
/// - `1`: a shared segment: marker, a header message (offset either the true
///   stream offset or one from the script, length from the script) and the
///   next bytes sealed under a one-time key;
/// - `2`: the next bytes as they are (garbage on the delimiting layer);
/// - `3`: a header message where a transport message is due (no marker);
/// - `4`: a bare marker.
///
/// The receiving half then reads it, cut into receives by the script, until
/// it ends or fails; it must never trap, and must never buffer more than its
/// frame limit.
enum ChannelScript {
    static let key = SecureBytes(copying: [UInt8](repeating: 0x5A, count: Noise.keyLength))
    static let frameLimit = 1 << 20

    static func run(_ script: [UInt8]) {
        var reader = ScriptReader(bytes: script)
        var sender = NoiseCipherState(key: key, cipher: .chaChaPoly)
        var stream: [UInt8] = []
        var offset: UInt64 = 0
        while let op = reader.byte(), stream.count < 1 << 20 {
            switch op % 5 {
            case 0:
                let plaintext = reader.bytes(reader.length(max: 65519))
                guard !plaintext.isEmpty, let sealed = try? sender.encrypt(plaintext) else { continue }
                NoiseMessageFramer.prefixed(sealed, into: &stream)
                offset += UInt64(plaintext.count)
            case 1, 3:
                let length = reader.length(max: frameLimit)
                let honest = reader.byte().map { $0 & 1 == 0 } ?? true
                let claimed = honest ? offset : UInt64(reader.length(max: 1 << 30))
                let header = SegmentHeader(offset: claimed, length: length, key: key).encoded
                guard let sealedHeader = try? sender.encrypt(header, ad: SegmentHeader.associatedData) else { continue }
                if op % 5 == 1 { stream += SegmentHeader.marker }
                NoiseMessageFramer.prefixed(sealedHeader, into: &stream)
                if op % 5 == 1 {
                    let body = reader.bytes(length)
                    stream += OneTimeSeal.seal(body[...], cipher: .chaChaPoly).sealed
                    offset += UInt64(body.count)
                }
            case 2:
                stream += reader.bytes(reader.length(max: 64))
            default:
                stream += SegmentHeader.marker
            }
        }
        let receiveSize = max(1, Int(script.last ?? 1))
        let receives = stride(from: 0, to: stream.count, by: receiveSize).map { Array(stream[$0..<min(stream.count, $0 + receiveSize)]) }
        let done = DispatchSemaphore(value: 0)
        Task {
            let channel = SecureChannelReader(
                connection: ScriptedConnection(receives: receives), cipher: NoiseCipherState(key: key, cipher: .chaChaPoly),
                framer: NoiseMessageFramer())
            await channel.limitFrames(to: frameLimit)
            await channel.acceptSegments()
            do {
                while try await channel.receive() != nil {}
            } catch {}
            done.signal()
        }
        done.wait()
    }
}

/// Reads a fuzz script: whatever is missing reads as zero-length.
private struct ScriptReader {
    let bytes: [UInt8]
    var position = 0

    mutating func byte() -> UInt8? {
        guard position < bytes.count else { return nil }
        defer { position += 1 }
        return bytes[position]
    }

    /// A length in 1...max from two bytes.
    mutating func length(max: Int) -> Int {
        let high = Int(byte() ?? 0), low = Int(byte() ?? 1)
        return (high << 8 | low) % max + 1
    }

    mutating func bytes(_ count: Int) -> [UInt8] {
        let end = min(bytes.count, position + count)
        defer { position = end }
        return Array(bytes[position..<end])
    }
}

/// A connection that hands out the receives it was given, then end of stream.
private actor ScriptedConnection: Connection {
    private var receives: [[UInt8]]
    private var next = 0

    init(receives: [[UInt8]]) { self.receives = receives }

    nonisolated var remoteAddress: PeerAddress? { nil }
    func send(_ bytes: [UInt8]) async throws(TransportError) {}
    func receive() async throws(TransportError) -> [UInt8]? {
        guard next < receives.count else { return nil }
        defer { next += 1 }
        return receives[next]
    }
    func close() async {}
}
