import Testing
@testable import LocalFirstSync
@testable import LFSyncContent
@testable import LFSyncCrypto
@testable import LFSyncWire

/// The copy-free sealer must put on the wire exactly the bytes of the plain
/// path it replaced: frames → `FrameEncoder` plaintexts → encrypt → 2-byte prefix.
@Suite struct FrameSealerTests {
    static func chunk(_ index: UInt32, length: Int) -> WireMessage {
        .chunk(.init(offerID: 7, contentID: ContentID(hash: Blake2b.hash([UInt8(index)])), fileIndex: 1, chunkIndex: index,
                     payload: .raw((0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(index)) })))
    }

    static func reference(_ frames: [Frame], cipher: inout NoiseCipherState) throws -> [UInt8] {
        var output: [UInt8] = []
        for plaintext in FrameEncoder.plaintexts(for: frames) {
            NoiseMessageFramer.prefixed(try cipher.encrypt(plaintext), into: &output)
        }
        return output
    }

    @Test(arguments: [
        [0],                                  // nothing but small messages
        [1],                                  // a chunk smaller than one Noise message
        [FrameEncoder.maxPlaintextPerMessage - 60],  // a chunk that ends near a message boundary
        [300_000, 17, 65_519 * 3],            // several chunks: messages straddle pieces
    ])
    func sealsTheSameBytesAsThePlainPath(chunkLengths: [Int]) throws {
        var pair = try NoisePair(.nn)
        let (initiator, _) = try pair.complete()
        var fast = try #require(initiator.sender)
        var plain = fast
        var messages: [WireMessage] = [.ping(.init(nonce: 1))]
        for (index, length) in chunkLengths.enumerated() where length > 0 {
            messages.append(Self.chunk(UInt32(index), length: length))
            messages.append(.pong(.init(nonce: UInt64(index))))
        }
        let sealed = try FrameSealer.seal(try FrameSealer.pieces(of: messages), with: &fast)
        let expected = try Self.reference(messages.map { try $0.frame() }, cipher: &plain)
        #expect(sealed == expected)
        #expect(fast.nonce == plain.nonce)
    }

    @Test func refusesAChunkOverTheFrameLimit() throws {
        let tooBig = WireMessage.chunk(.init(offerID: 1, contentID: ContentID(hash: Blake2b.hash([])), fileIndex: 0, chunkIndex: 0,
                                             payload: .raw([UInt8](repeating: 1, count: Int(ChunkerConfiguration.absoluteMaxChunkSize) + 1))))
        #expect(throws: WireError.self) { _ = try FrameSealer.pieces(of: [tooBig]) }
    }
}
