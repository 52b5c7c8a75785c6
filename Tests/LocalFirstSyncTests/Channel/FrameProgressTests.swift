import Testing
@testable import LocalFirstSync
@testable import LocalFirstSyncTesting
@testable import LFSyncCrypto
@testable import LFSyncTransport
@testable import LFSyncWire

/// A frame that has begun must keep coming (PROTOCOL.md, "Limits and deadlines").
@Suite struct FrameProgressTests {
    @Test func aByteEveryFewSecondsIsCutOffAfterTheGrace() {
        var progress = FrameProgress(minimumRate: 1024, grace: .seconds(30))
        var cut: Duration?
        var waited: Duration = .zero
        for _ in 0..<20 {
            waited += .seconds(5)
            do { try progress.waited(.seconds(5), received: 1) } catch {
                cut = waited
                break
            }
        }
        #expect(cut == .seconds(35), "cut once the 30 s grace was over")
    }

    @Test func aSlowButSteadyFrameIsNot() throws {
        var progress = FrameProgress(minimumRate: 1024, grace: .seconds(30))
        for _ in 0..<120 { try progress.waited(.seconds(1), received: 2048) }
    }

    @Test func silenceInsideAFrameEndsIt() {
        var progress = FrameProgress(minimumRate: 1024, grace: .seconds(30))
        #expect(throws: SecureChannelError.self) { try progress.waited(.seconds(60), received: 0) }
    }

    @Test func eachFrameStartsAfresh() throws {
        var progress = FrameProgress(minimumRate: 1024, grace: .seconds(30))
        try progress.waited(.seconds(29), received: 10)
        progress.reset()
        try progress.waited(.seconds(29), received: 10)
        #expect(throws: SecureChannelError.self) { try progress.waited(.seconds(2), received: 10) }
    }
}

/// Conformance: a Noise message that has begun falls under the frame-rate rule even
/// when not one more byte comes — 10 bytes of a 1000-byte message, then silence, end the
/// connection at the grace (30 s in the protocol, 1 s here), not at the transport's idle
/// timeout (60 s), which is how long it used to stay open.
@Suite struct SilenceInsideAMessageTests {
    @Test func silenceAfterTheFirstBytesOfAMessageEndsTheConnectionAtTheGrace() async throws {
        let (sender, reader, listener) = try await Self.rawReader()
        await reader.requireFrameRate(FrameProgress(minimumRate: 1024, grace: .seconds(1)))
        var sealer = NoiseCipherState(key: Self.key)
        var message: [UInt8] = []
        NoiseMessageFramer.prefixed(try sealer.encrypt([UInt8](repeating: 0, count: 984)), into: &message)
        #expect(message.count == 1002)
        try await sender.send(Array(message.prefix(10)))
        let started = ContinuousClock.now
        await #expect {
            _ = try await reader.receive()
        } throws: { error in
            guard case .stalled? = error as? SecureChannelError else { return false }
            return true
        }
        let waited = ContinuousClock.now - started
        #expect(waited >= .seconds(1), "not before the grace")
        #expect(waited < .seconds(10), "ended by the rule, not by an idle timeout: \(waited)")
        await sender.close()
        await listener.close()
    }

    static let key = SecureBytes(copying: [UInt8](repeating: 7, count: 32))

    /// A receiving half on an in-memory connection whose other end writes raw bytes.
    static func rawReader() async throws -> (sender: any Connection, reader: SecureChannelReader, listener: any Listener) {
        let transport = InMemoryTransport()
        let listener = try await transport.listen(on: SecureChannelTests.memoryAddress())
        async let accepted = listener.accept()
        let sender = try await transport.connect(to: listener.localAddress, timeout: .seconds(5))
        let reader = SecureChannelReader(connection: try await accepted, cipher: NoiseCipherState(key: key), framer: NoiseMessageFramer())
        return (sender, reader, listener)
    }

    @Test func theSilenceAllowedCoversTheGraceAndTheBytesSoFar() throws {
        var progress = FrameProgress(minimumRate: 1024, grace: .seconds(30))
        #expect(progress.silenceAllowed > .seconds(30) && progress.silenceAllowed < .milliseconds(30_002))
        try progress.waited(.seconds(20), received: 10)
        #expect(progress.silenceAllowed > .seconds(10) && progress.silenceAllowed < .milliseconds(10_002))
        // 61,440 bytes in 20 s: at 1024 B/s they buy 60 s in all, so 40 s more of silence.
        try progress.waited(.zero, received: 61_430)
        #expect(progress.silenceAllowed > .seconds(40) && progress.silenceAllowed < .milliseconds(40_002))
    }
}

/// Found by the channel fuzzer: a Noise message shorter than its 16-byte tag trapped the
/// receiver (a byte count went negative) — one 3-byte write could crash `serve`. It is
/// a failed message like any other now.
@Suite struct ShortNoiseMessageTests {
    @Test(arguments: [1, 5, 15])
    func aMessageShorterThanItsTagEndsTheChannelWithoutATrap(length: Int) async throws {
        let (sender, reader, listener) = try await SilenceInsideAMessageTests.rawReader()
        var bytes: [UInt8] = []
        NoiseMessageFramer.prefixed([UInt8](repeating: 0xEE, count: length), into: &bytes)
        try await sender.send(bytes)
        await #expect {
            _ = try await reader.receive()
        } throws: { error in
            guard case .handshake(.decryptFailed)? = error as? SecureChannelError else { return false }
            return true
        }
        await sender.close()
        await listener.close()
    }
}
