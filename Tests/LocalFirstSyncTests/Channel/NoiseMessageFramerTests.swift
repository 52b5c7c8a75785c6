import Testing
@testable import LocalFirstSync
@testable import LFSyncCrypto
@testable import LFSyncSystem
@testable import LFSyncWire

/// Messages come out whole and in order however the stream is cut into receives,
/// including cuts inside the 2-byte length and messages spanning several receives.
@Suite struct NoiseMessageFramerTests {
    @Test(arguments: [1, 3, 1000, 70_000, 256 << 10])
    func reassemblesEveryMessageWhateverTheReceiveSizes(maximumReceive: Int) throws {
        var generator = SplitMix64(seed: UInt64(maximumReceive))
        // Small enough to stay quick when fed a byte at a time (a synchronous test holds a
        // cooperative thread), with two messages of the largest size among them.
        let messages: [[UInt8]] = (0..<40).map { index in
            let length = index % 20 == 5 ? Noise.maxMessageLength : Int.random(in: 0...3_000, using: &generator)
            return (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) }
        }
        var stream: [UInt8] = []
        for message in messages { NoiseMessageFramer.prefixed(message, into: &stream) }

        // Like the channel: receive more only when no whole message is buffered.
        var framer = NoiseMessageFramer()
        var received: [[UInt8]] = []
        var offset = 0
        while received.count < messages.count {
            if let message = framer.next() {
                received.append(message)
                continue
            }
            try #require(offset < stream.count, "stream ended with \(received.count) of \(messages.count) messages")
            let count = min(stream.count - offset, Int.random(in: 1...maximumReceive, using: &generator))
            framer.append(Array(stream[offset..<offset + count]))
            offset += count
        }
        #expect(received == messages)
        #expect(offset == stream.count)
        #expect(!framer.hasPartialMessage)
    }

    @Test func aCutInsideAMessageIsReportedAsPartial() {
        var framer = NoiseMessageFramer()
        var stream: [UInt8] = []
        NoiseMessageFramer.prefixed([1, 2, 3], into: &stream)
        framer.append(Array(stream[0..<1]))
        #expect(framer.next() == nil)
        #expect(framer.hasPartialMessage)
        framer.append(Array(stream[1..<4]))
        #expect(framer.next() == nil)
        framer.append(Array(stream[4...]))
        #expect(framer.next() == [1, 2, 3])
        #expect(!framer.hasPartialMessage)
    }
}
