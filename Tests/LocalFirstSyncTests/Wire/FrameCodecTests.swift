import Testing
@testable import LocalFirstSync
@testable import LFSyncCrypto
@testable import LFSyncSystem
@testable import LFSyncWire

@Suite struct FrameCodecTests {
    static func sampleFrames() -> [Frame] {
        var generator = SplitMix64(seed: 11)
        return [
            Frame(type: 1, payload: []),
            Frame(type: 2, payload: [0xAB]),
            Frame(type: 3, payload: generator.bytes(70_000)),  // spans two Noise messages
            Frame(type: 4, payload: generator.bytes(5)),
            Frame(type: 5, payload: generator.bytes(200_000)),
            Frame(type: 6, payload: []),
        ]
    }

    private static func drain(_ decoder: inout FrameDecoder) throws -> [Frame] {
        var frames: [Frame] = []
        while let frame = try decoder.nextFrame() { frames.append(frame) }
        return frames
    }

    @Test func headerLayout() {
        #expect(Frame(type: 0x12, payload: [UInt8](repeating: 0, count: 0x0102_03)).header == [0x12, 0x00, 0x01, 0x02, 0x03])
        #expect(Frame(type: 4, payload: [9, 8]).encoded() == [4, 0, 0, 0, 2, 9, 8])
    }

    @Test func plaintextsRespectTheNoiseLimitAndConcatenateToTheStream() {
        let frames = Self.sampleFrames()
        let messages = FrameEncoder.plaintexts(for: frames)
        #expect(FrameEncoder.maxPlaintextPerMessage == 65_519)
        #expect(messages.allSatisfy { !$0.isEmpty && $0.count <= 65_519 })
        #expect(messages.dropLast().allSatisfy { $0.count == 65_519 }, "all but the last are full")
        #expect(Array(messages.joined()) == Array(frames.map { $0.encoded() }.joined()))
    }

    @Test func decodesWholeMessages() throws {
        let frames = Self.sampleFrames()
        var decoder = FrameDecoder()
        var decoded: [Frame] = []
        for message in FrameEncoder.plaintexts(for: frames) {
            try decoder.append(message)
            decoded += try Self.drain(&decoder)
        }
        #expect(decoded == frames)
        #expect(decoder.bufferedByteCount == 0)
        try decoder.finish()
    }

    @Test func decodesOneByteAtATime() throws {
        var generator = SplitMix64(seed: 12)
        let frames = [Frame(type: 1, payload: []), Frame(type: 9, payload: generator.bytes(3_000)), Frame(type: 2, payload: [7])]
        let stream = Array(frames.map { $0.encoded() }.joined())
        var decoder = FrameDecoder()
        var decoded: [Frame] = []
        for byte in stream {
            try decoder.append(CollectionOfOne(byte))
            decoded += try Self.drain(&decoder)
        }
        #expect(decoded == frames)
    }

    @Test func decodesRandomSplits() throws {
        let frames = Self.sampleFrames()
        let stream = Array(frames.map { $0.encoded() }.joined())
        var generator = SplitMix64(seed: 13)
        for _ in 0..<20 {
            var decoder = FrameDecoder()
            var decoded: [Frame] = []
            var offset = 0
            while offset < stream.count {
                let length = min(stream.count - offset, Int(generator.next() % 70_000))
                try decoder.append(stream[offset..<offset + length])
                offset += length
                decoded += try Self.drain(&decoder)
            }
            #expect(decoded == frames)
        }
        // Everything at once works too.
        var decoder = FrameDecoder()
        try decoder.append(stream)
        #expect(try Self.drain(&decoder) == frames)
    }

    @Test func oversizedHeaderIsRejectedAfterFiveBytes() throws {
        var decoder = FrameDecoder()
        try decoder.append([0x12, 0xFF, 0xFF])
        #expect(try decoder.nextFrame() == nil)
        #expect(throws: FrameError.frameTooLarge(length: UInt32.max, limit: FrameDecoder.defaultMaxFrameLength)) {
            try decoder.append([0xFF, 0xFF])
        }
        #expect(decoder.bufferedByteCount == 0, "nothing of the lie is kept")
        // The decoder stays failed: the stream is out of sync.
        #expect(throws: FrameError.self) { try decoder.append([0]) }
        #expect(throws: FrameError.self) { try decoder.nextFrame() }
    }

    @Test func limitIsConfigurableAndInclusive() throws {
        var decoder = FrameDecoder(maxFrameLength: 10)
        try decoder.append(Frame(type: 1, payload: [UInt8](repeating: 1, count: 10)).encoded())
        #expect(try decoder.nextFrame()?.payload.count == 10)
        #expect(throws: FrameError.frameTooLarge(length: 11, limit: 10)) {
            try decoder.append(Frame(type: 1, payload: [UInt8](repeating: 1, count: 11)).header)
        }
    }

    /// A header is checked as soon as its five bytes are in, even behind a complete frame
    /// nobody has pulled yet: the lie is refused on arrival, and the stream with it.
    @Test func oversizedFollowingHeaderIsRejectedOnArrival() throws {
        var decoder = FrameDecoder(maxFrameLength: 100)
        #expect(throws: FrameError.frameTooLarge(length: 256, limit: 100)) {
            try decoder.append([1, 0, 0, 0, 1, 0xAA, 2, 0, 0, 1, 0])
        }
        #expect(decoder.bufferedByteCount == 0)
        #expect(throws: FrameError.frameTooLarge(length: 256, limit: 100)) { try decoder.nextFrame() }
    }

    /// The channel's path: a Noise message decrypted straight into the frame it continues.
    /// Only bytes that fit the frame under way go in place; the rest take `append`.
    @Test func appendInPlaceFillsOnlyTheFrameUnderWay() throws {
        var decoder = FrameDecoder()
        let payload = (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let encoded = Frame(type: 0x12, payload: payload).encoded() + Frame(type: 1, payload: [9]).encoded()
        #expect(try !decoder.appendInPlace(count: 10) { _ in Issue.record("no frame is under way yet") })
        try decoder.append(encoded[0..<105])  // the header and 100 bytes of the payload
        #expect(try !decoder.appendInPlace(count: 201) { _ in Issue.record("201 bytes would cross into the next frame") })
        struct Refused: Error {}
        #expect(throws: Refused.self) { _ = try decoder.appendInPlace(count: 50) { _ throws(Refused) in throw Refused() } }
        #expect(decoder.bufferedByteCount == 100, "a failed write appends nothing")
        let rest = Array(encoded[105..<305])
        #expect(try decoder.appendInPlace(count: 200) { output in
            rest.withUnsafeBytes { output.copyMemory(from: $0) }
        })
        try decoder.append(encoded[305...])
        #expect(try Self.drain(&decoder) == [Frame(type: 0x12, payload: payload), Frame(type: 1, payload: [9])])
        #expect(decoder.bufferedByteCount == 0)
        try decoder.finish()
    }

    @Test func endOfStreamRightAfterAHeaderIsAnError() throws {
        var decoder = FrameDecoder()
        try decoder.append([1, 0, 0, 0, 4])
        #expect(decoder.hasPartialFrame)
        #expect(throws: FrameError.self) { try decoder.finish() }
        var empty = FrameDecoder()
        try empty.append([1, 0, 0, 0, 0])
        #expect(try empty.nextFrame() == Frame(type: 1, payload: []))
        #expect(!empty.hasPartialFrame)
        try empty.finish()
    }

    @Test func endOfStreamInsideAFrameIsAnError() throws {
        var decoder = FrameDecoder()
        try decoder.append([1, 0, 0, 0, 4, 1, 2])
        #expect(try decoder.nextFrame() == nil)
        #expect(throws: FrameError.truncatedStream(bufferedBytes: 2)) { try decoder.finish() }
    }

    @Test func plaintextsSurviveNoiseTransport() throws {
        // End to end through a real Noise session: frames → plaintexts → encrypt → decrypt → frames.
        let initiatorKey = NoiseKeyPair.generate()
        let responderKey = NoiseKeyPair.generate()
        var initiator = try NoiseHandshake(pattern: .xx, role: .initiator, staticKeyPair: initiatorKey)
        var responder = try NoiseHandshake(pattern: .xx, role: .responder, staticKeyPair: responderKey)
        _ = try responder.readMessage(try initiator.writeMessage())
        _ = try initiator.readMessage(try responder.writeMessage())
        _ = try responder.readMessage(try initiator.writeMessage())
        var sending = try initiator.split()
        var receiving = try responder.split()

        let frames = try WireFixtures.messages.map { try $0.frame() } + Self.sampleFrames()
        var decoder = FrameDecoder()
        var decoded: [Frame] = []
        for plaintext in FrameEncoder.plaintexts(for: frames) {
            let ciphertext = try sending.encrypt(plaintext)
            #expect(ciphertext.count <= Noise.maxMessageLength)
            try decoder.append(try receiving.decrypt(ciphertext))
            decoded += try Self.drain(&decoder)
        }
        #expect(decoded == frames)
    }
}
