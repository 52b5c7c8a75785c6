import Foundation
import Testing
@testable import LFSyncContent
@testable import LFSyncCrypto
@testable import LFSyncSystem
@testable import LFSyncTCP
@testable import LFSyncTransport
@testable import LFSyncWire
@testable import LocalFirstSyncTesting

/// Chunk data sealed once for a broadcast (PROTOCOL.md, "Shared segments"):
/// it arrives intact over real TCP, goes only to a peer that asked for
/// segments, and a segment that breaks the rules ends the channel.
@Suite struct SharedSegmentTests {
    let alice = DeviceIdentity.generate()
    let bob = DeviceIdentity.generate()

    static func chunk(_ index: UInt32, _ bytes: [UInt8], sealedWith cipher: NoiseCipher?) -> WireMessage.Chunk {
        WireMessage.Chunk(
            offerID: 7, contentID: ContentID(hash: Blake2b.hash(bytes)), fileIndex: 0, chunkIndex: index, payload: .raw(bytes),
            sealedOnce: cipher.map { OneTimeSeal.seal(bytes[...], cipher: $0) })
    }

    /// The chunk as the receiver decodes it: the seal never travels as a field.
    static func unsealed(_ chunk: WireMessage.Chunk) -> WireMessage {
        var chunk = chunk
        chunk.sealedOnce = nil
        return .chunk(chunk)
    }

    static func expectBadSegment(on channel: SecureChannel) async {
        await #expect {
            _ = try await channel.receive()
        } throws: { error in
            guard case .badSegment? = error as? SecureChannelError else { return false }
            return true
        }
    }

    func tcpPair() async throws -> (client: SecureChannel, server: SecureChannel) {
        try await SecureChannelTests.channelPair(
            transport: TCPTransport(), listenOn: PeerAddress(host: "127.0.0.1", port: 0),
            initiator: alice, responder: bob, expected: bob.deviceID)
    }

    /// Several sealed chunks, an unsealed one and other messages in one send, every one
    /// whole and in order on the other side; the same send to a channel that was never
    /// told to use segments goes through the channel's own cipher.
    @Test func sealedChunksArriveIntactAmongOtherMessages() async throws {
        let (client, server) = try await tcpPair()
        await server.acceptSharedSegments()
        await client.peerAnnounced(.sharedSegments)
        #expect(await client.sharedSegmentCipher == client.cipher)
        var generator = SplitMix64(seed: 5)
        let chunks = (0..<6).map { index in
            Self.chunk(UInt32(index), generator.bytes(100_000 + 150_001 * index), sealedWith: index == 3 ? nil : client.cipher)
        }
        let messages: [WireMessage] = [.ping(.init(nonce: 1))] + chunks.prefix(3).map { .chunk($0) }
            + [.pong(.init(nonce: 2))] + chunks.dropFirst(3).map { .chunk($0) }
        try await client.send(messages)
        for message in messages {
            let expected = if case let .chunk(chunk) = message { Self.unsealed(chunk) } else { message }
            #expect(try await server.receive() == expected)
        }
        #expect(await client.bytesSent == (await server.bytesReceived))
        await client.close()
        await server.close()
    }

    /// A peer that did not announce segments never gets one: the seal is ignored and the
    /// channel encrypts the data itself. A seal made with another cipher is ignored too.
    @Test func segmentsGoOnlyWhereTheyWereAskedFor() async throws {
        let (client, server) = try await tcpPair()
        var generator = SplitMix64(seed: 6)
        let sealed = Self.chunk(0, generator.bytes(300_000), sealedWith: client.cipher)
        try await client.send(.chunk(sealed))
        #expect(try await server.receive() == Self.unsealed(sealed))

        await server.acceptSharedSegments()
        await client.peerAnnounced(.sharedSegments)
        let other: NoiseCipher = client.cipher == .aesGCM ? .chaChaPoly : .aesGCM
        if other.isAvailable {
            let foreign = Self.chunk(1, generator.bytes(300_000), sealedWith: other)
            try await client.send(.chunk(foreign))
            #expect(try await server.receive() == Self.unsealed(foreign))
        } else {
            print("segmentsGoOnlyWhereTheyWereAskedFor: \(other) is not available here; the foreign-cipher half did not run")
        }
        await client.close()
        await server.close()
    }

    /// A receiver that never said it accepts segments ends the channel on the first one.
    @Test func anUnannouncedSegmentEndsTheChannel() async throws {
        let (client, server) = try await tcpPair()
        await client.peerAnnounced(.sharedSegments)
        var generator = SplitMix64(seed: 7)
        try await client.send(.chunk(Self.chunk(0, generator.bytes(200_000), sealedWith: client.cipher)))
        await Self.expectBadSegment(on: server)
        await client.close()
        await server.close()
    }

    /// Sealed bytes changed on the way (or forged by another holder of the key) fail their
    /// tag, and the channel ends.
    @Test func aTamperedSegmentEndsTheChannel() async throws {
        let (client, server) = try await tcpPair()
        await server.acceptSharedSegments()
        await client.peerAnnounced(.sharedSegments)
        var generator = SplitMix64(seed: 8)
        var chunk = Self.chunk(0, generator.bytes(200_000), sealedWith: client.cipher)
        let seal = try #require(chunk.sealedOnce)
        var tampered = seal.sealed
        tampered[1234] ^= 0x01
        chunk.sealedOnce = OneTimeSeal(cipher: seal.cipher, key: seal.key, sealed: tampered)
        try await client.send(.chunk(chunk))
        await Self.expectBadSegment(on: server)
        await client.close()
        await server.close()
    }

    /// A header's length is checked against the frame limit before a byte of the segment is
    /// buffered, and a header of any other size is refused.
    @Test func segmentHeadersAreBoundsChecked() throws {
        let key = SecureBytes(copying: [UInt8](repeating: 9, count: 32))
        let header = SegmentHeader(offset: 0x0102_0304_0506_0708, length: 70_000, key: key)
        #expect(header.encoded.count == 44)
        #expect(Array(header.encoded.prefix(12)) == [1, 2, 3, 4, 5, 6, 7, 8, 0, 1, 0x11, 0x70])
        let decoded = try SegmentHeader(decoding: header.encoded, limit: 70_000)
        #expect(decoded.offset == 0x0102_0304_0506_0708)
        #expect(decoded.length == 70_000)
        #expect(decoded.key.bytes == key.bytes)
        #expect(throws: SecureChannelError.self) { _ = try SegmentHeader(decoding: header.encoded, limit: 4096) }
        #expect(throws: SecureChannelError.self) {
            _ = try SegmentHeader(decoding: SegmentHeader(offset: 0, length: 0, key: key).encoded, limit: 4096)
        }
        #expect(throws: SecureChannelError.self) { _ = try SegmentHeader(decoding: Array(header.encoded.dropLast()), limit: 70_000) }
    }

    /// Sealed bytes split over many receives are handed out whole, once all have come,
    /// and the Noise message behind them is read as usual.
    @Test func rawBytesAreGatheredAcrossReceives() throws {
        var stream = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        NoiseMessageFramer.prefixed([1, 2, 3], into: &stream)
        var framer = NoiseMessageFramer()
        var offset = 0
        var gathered: [UInt8]?
        while gathered == nil {
            #expect(offset < stream.count)
            let next = min(stream.count, offset + 7_001)
            framer.append(Array(stream[offset..<next]))
            offset = next
            gathered = framer.withNextBytes(100_000) { Array($0) }
        }
        #expect(gathered == Array(stream.prefix(100_000)))
        if offset < stream.count { framer.append(Array(stream[offset...])) }
        #expect(framer.next() == [1, 2, 3])
        #expect(!framer.hasPartialMessage)
    }

    /// A segment trickled in one byte per receive (one per TCP segment) is held in a few
    /// arrays, not one per byte (each costs some 50 bytes of heap), and still comes out whole.
    @Test func aTrickledSegmentIsHeldInFewArrays() throws {
        let count = 300_000
        let stream = (0..<count + 2).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        var framer = NoiseMessageFramer()
        framer.append([stream[0], stream[1]])
        _ = framer.withNextBytes(2) { _ in () }
        var gathered: [UInt8]?
        var mostArrays = 0
        for byte in stream.dropFirst(2) {
            // Asked after every byte, as the reader does after every receive.
            #expect(gathered == nil)
            framer.append([byte])
            mostArrays = max(mostArrays, framer.queuedArrayCount)
            gathered = framer.withNextBytes(count) { Array($0) }
        }
        #expect(gathered == Array(stream.dropFirst(2)))
        #expect(mostArrays <= 1 + count / NoiseMessageFramer.coalescingLimit, "held \(mostArrays) arrays for \(count) bytes")
        #expect(!framer.hasPartialMessage)
    }
}
