import Foundation
import Synchronization
import Testing
@testable import LFSyncContent
@testable import LFSyncCrypto
@testable import LFSyncSystem
@testable import LFSyncTCP
@testable import LFSyncTransport
@testable import LFSyncWire

/// Shared segments edited on the link (PROTOCOL.md, "Shared segments", protocol
/// version 3): markers and segments stripped, duplicated, reordered, inserted, and
/// a segment's bytes forged by a co-recipient who knows its key. Over real TCP,
/// the receiver gets every message before the edit as it was sent, then its
/// channel ends; nothing after the edit ever comes out as a message — in
/// particular no frame the attacker placed.
@Suite struct SegmentSpliceTests {
    let alice = DeviceIdentity.generate()
    let bob = DeviceIdentity.generate()

    /// What the sender's channel writes, held back until the test has edited it.
    actor TappedConnection: Connection {
        let inner: any Connection
        private var holding = false
        private(set) var held: [UInt8] = []

        init(_ inner: any Connection) { self.inner = inner }

        nonisolated var remoteAddress: PeerAddress? { inner.remoteAddress }

        func hold() { holding = true }

        func send(_ bytes: [UInt8]) async throws(TransportError) {
            if holding { held += bytes } else { try await inner.send(bytes) }
        }

        /// What was held back; from now on sends go through again.
        func release() -> [UInt8] {
            defer { held = [] }
            holding = false
            return held
        }

        func receive() async throws(TransportError) -> [UInt8]? { try await inner.receive() }
        func close() async { await inner.close() }
        func abort() async { await inner.abort() }
    }

    /// The sender's stream cut where a Noise message or a segment stands.
    enum Token: Equatable {
        /// A transport message with its length prefix.
        case message([UInt8])
        /// A marker, its length-prefixed header message and its sealed bytes.
        case segment(header: [UInt8], sealed: [UInt8])

        var bytes: [UInt8] {
            switch self {
            case let .message(bytes): bytes
            case let .segment(header, sealed): SegmentHeader.marker + header + sealed
            }
        }

        var isSegment: Bool { if case .segment = self { true } else { false } }

        /// Cuts `stream`; a segment's sealed bytes have no prefix, so their lengths
        /// (which a co-recipient knows: it got the same segments) are given in order.
        static func tokens(of stream: [UInt8], sealedLengths: [Int]) throws -> [Token] {
            var tokens: [Token] = []
            var position = 0
            var lengths = sealedLengths[...]
            func prefixed() throws -> [UInt8] {
                try #require(stream.count - position >= 2)
                let length = Int(stream[position]) << 8 | Int(stream[position + 1])
                try #require(stream.count - position - 2 >= length)
                defer { position += 2 + length }
                return Array(stream[position..<position + 2 + length])
            }
            while position < stream.count {
                if stream[position] == 0, stream[position + 1] == 0 {
                    position += 2
                    let header = try prefixed()
                    let next = lengths.popFirst()
                    let length = try #require(next)
                    let sealed = Array(stream[position..<position + length])
                    position += length
                    tokens.append(.segment(header: header, sealed: sealed))
                } else {
                    tokens.append(.message(try prefixed()))
                }
            }
            #expect(lengths.isEmpty)
            return tokens
        }
    }

    /// A ping, two sealed chunks with a pong between them, and a ping after: the
    /// edits below touch the segments, the messages around them show where the
    /// receiver stands.
    struct Broadcast {
        let messages: [WireMessage]
        let seals: [OneTimeSeal]
    }

    static func broadcast(cipher: NoiseCipher) -> Broadcast {
        var generator = SplitMix64(seed: 30)
        let chunks = [200_000, 150_000].enumerated().map { index, count in
            SharedSegmentTests.chunk(UInt32(index), generator.bytes(count), sealedWith: cipher)
        }
        let messages: [WireMessage] = [.ping(.init(nonce: 1)), .chunk(chunks[0]), .pong(.init(nonce: 2)), .chunk(chunks[1]), .ping(.init(nonce: 3))]
        return Broadcast(messages: messages, seals: chunks.compactMap(\.sealedOnce))
    }

    /// Sends `broadcast` from Alice to Bob with `edit` applied on the way, and returns
    /// what Bob's channel handed out before it ended, and how it ended.
    func deliver(
        _ broadcast: (NoiseCipher) -> Broadcast = Self.broadcast, edit: @escaping ([Token], Broadcast) throws -> [Token]
    ) async throws -> (received: [WireMessage], ending: (any Error)?, sent: Broadcast) {
        let transport = TCPTransport()
        let listener = try await transport.listen(on: PeerAddress(host: "127.0.0.1", port: 0))
        defer { Task { await listener.close() } }
        async let accepted = SecureChannel.accept(over: try await listener.accept(), identity: bob)
        let tap = TappedConnection(try await transport.connect(to: listener.localAddress, timeout: .seconds(5)))
        let client = try await SecureChannel.initiate(over: tap, identity: alice, expectedPeer: bob.deviceID)
        let server = try await accepted
        await server.acceptSharedSegments()
        await client.peerAnnounced(.sharedSegments)
        let sent = broadcast(client.cipher)
        await tap.hold()
        try await client.send(sent.messages)
        let tokens = try Token.tokens(of: await tap.release(), sealedLengths: sent.seals.map(\.sealed.count))
        #expect(tokens.filter(\.isSegment).count == sent.seals.count, "every sealed chunk went as a segment")
        try await tap.inner.send(try edit(tokens, sent).flatMap(\.bytes))
        await client.close()
        var received: [WireMessage] = []
        var ending: (any Error)?
        do {
            while let message = try await server.receive() { received.append(message) }
        } catch {
            ending = error
        }
        await server.close()
        return (received, ending, sent)
    }

    static func segmentIndices(_ tokens: [Token]) -> [Int] {
        tokens.indices.filter { tokens[$0].isSegment }
    }

    /// Every edit below touches the first segment or what follows it, so Bob must have
    /// received the first Ping, and nothing else, when his channel ends.
    static func expectEndedAfterPing(_ outcome: (received: [WireMessage], ending: (any Error)?, sent: Broadcast)) {
        #expect(outcome.ending != nil, "the channel must end, not close cleanly")
        #expect(outcome.received.map(summary) == ["Ping 1"], "nothing after the edit comes out as a message")
    }

    /// A message in a few words (a chunk's data would fill the log).
    static func summary(_ message: WireMessage) -> String {
        switch message {
        case let .ping(ping): "Ping \(ping.nonce)"
        case let .pong(pong): "Pong \(pong.nonce)"
        case let .chunk(chunk): "Chunk \(chunk.chunkIndex) of \(chunk.payload.encodedLength) bytes"
        default: "\(message.type)"
        }
    }

    /// Unedited, the stream arrives whole (the harness itself is sound).
    @Test func anUneditedBroadcastArrivesWhole() async throws {
        let outcome = try await deliver { tokens, _ in tokens }
        #expect(outcome.ending == nil)
        let expected = outcome.sent.messages.map { message -> WireMessage in
            if case let .chunk(chunk) = message { SharedSegmentTests.unsealed(chunk) } else { message }
        }
        #expect(outcome.received.map(Self.summary) == expected.map(Self.summary))
        #expect(outcome.received == expected)
    }

    /// The marker alone deleted: the header message now stands where a transport message
    /// would. In version 2 it decrypted as one, and its 36 bytes shifted every frame
    /// boundary after it; now it fails, because a header opens only as a header.
    @Test func aStrippedMarkerEndsTheChannel() async throws {
        let outcome = try await deliver { tokens, _ in
            var tokens = tokens
            let first = try #require(Self.segmentIndices(tokens).first)
            guard case let .segment(header, sealed) = tokens[first] else { return tokens }
            tokens[first] = .message(header)
            tokens.insert(.message(sealed), at: first + 1)
            return tokens
        }
        Self.expectEndedAfterPing(outcome)
    }

    /// The version-2 splice, as a co-recipient of the broadcast would make it: the first
    /// segment's marker and sealed bytes deleted and its header kept, so that (in version 2)
    /// the header's plaintext and the stream after it fill the first chunk's data; the first
    /// chunk then ends inside the second segment, whose key the co-recipient knows — so it
    /// reseals that segment with frames of its own at exactly that point. In version 2 the
    /// receiver read those frames as the sender's. Now the header fails as a transport
    /// message and nothing after the edit comes out.
    @Test func aSplicedBroadcastPlacesNoFrame() async throws {
        let outcome = try await deliver({ cipher in
            var generator = SplitMix64(seed: 31)
            let chunks = [100_000, 200_000].enumerated().map { index, count in
                SharedSegmentTests.chunk(UInt32(index), generator.bytes(count), sealedWith: cipher)
            }
            return Broadcast(
                messages: [.ping(.init(nonce: 1)), .chunk(chunks[0]), .pong(.init(nonce: 2)), .chunk(chunks[1]), .ping(.init(nonce: 3))],
                seals: chunks.compactMap(\.sealedOnce))
        }) { tokens, sent in
            var tokens = tokens
            let segments = Self.segmentIndices(tokens)
            try #require(segments.count == 2 && segments[1] == segments[0] + 2)
            guard case let .segment(firstHeader, _) = tokens[segments[0]], case let .message(between) = tokens[segments[0] + 1],
                  case let .segment(secondHeader, _) = tokens[segments[1]] else { return tokens }
            // What the receiver would read into the first chunk's data before the second segment.
            let taken = (firstHeader.count - 2 - Noise.tagLength) + (between.count - 2 - Noise.tagLength)
            let missing = sent.seals[0].plaintextCount - taken
            var forged = [UInt8](repeating: 0, count: missing)
            forged += try WireMessage.ping(.init(nonce: 666)).frame().encoded()
            // The rest of the second segment as one chunk frame, so the stream after it stays in step.
            let rest = sent.seals[1].plaintextCount - forged.count - Frame.headerLength - WireMessage.Chunk.fieldsLength
            forged += try WireMessage.chunk(.init(offerID: 7, contentID: ContentID(hash: Blake2b.hash([])), fileIndex: 0, chunkIndex: 9,
                                                  payload: .raw([UInt8](repeating: 0x41, count: rest)))).frame().encoded()
            try #require(forged.count == sent.seals[1].plaintextCount)
            tokens[segments[1]] = .segment(header: secondHeader, sealed: Self.reseal(forged, like: sent.seals[1]))
            tokens[segments[0]] = .message(firstHeader)
            return tokens
        }
        #expect(!outcome.received.contains(.ping(.init(nonce: 666))), "a frame placed by the co-recipient was read as the sender's")
        Self.expectEndedAfterPing(outcome)
    }

    /// `plaintext` sealed under `seal`'s key, as anyone who received that segment can.
    static func reseal(_ plaintext: [UInt8], like seal: OneTimeSeal) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: plaintext.count + Noise.tagLength) { buffer, count in
            guard let base = buffer.baseAddress else { return }
            plaintext.withUnsafeBytes { seal.cipher.encrypt(key: seal.key, counter: 0, plaintext: $0, into: base) }
            count = plaintext.count + Noise.tagLength
        }
    }

    /// A whole segment (marker, header, sealed bytes) deleted.
    @Test func aStrippedSegmentEndsTheChannel() async throws {
        let outcome = try await deliver { tokens, _ in
            var tokens = tokens
            tokens.remove(at: try #require(Self.segmentIndices(tokens).first))
            return tokens
        }
        Self.expectEndedAfterPing(outcome)
    }

    /// A segment sent twice.
    @Test func aDuplicatedSegmentEndsTheChannel() async throws {
        let outcome = try await deliver { tokens, _ in
            var tokens = tokens
            let first = try #require(Self.segmentIndices(tokens).first)
            tokens.insert(tokens[first], at: first + 1)
            return tokens
        }
        // The first copy completes the first chunk; the second is out of place.
        #expect(outcome.ending != nil)
        #expect(outcome.received.count == 2)
        #expect(outcome.received.first == .ping(.init(nonce: 1)))
        if case let .chunk(chunk)? = outcome.received.last, case let .chunk(sent) = outcome.sent.messages[1] {
            #expect(chunk == { var plain = sent; plain.sealedOnce = nil; return plain }())
        } else {
            Issue.record("the first chunk, intact, then the end: got \(outcome.received)")
        }
    }

    /// The two segments swapped, each with its header.
    @Test func reorderedSegmentsEndTheChannel() async throws {
        let outcome = try await deliver { tokens, _ in
            var tokens = tokens
            let segments = Self.segmentIndices(tokens)
            try #require(segments.count == 2)
            tokens.swapAt(segments[0], segments[1])
            return tokens
        }
        Self.expectEndedAfterPing(outcome)
    }

    /// The sealed bytes of the two segments swapped, headers left in place.
    @Test func swappedSealedBytesEndTheChannel() async throws {
        let outcome = try await deliver { tokens, _ in
            var tokens = tokens
            let segments = Self.segmentIndices(tokens)
            try #require(segments.count == 2)
            guard case let .segment(firstHeader, firstSealed) = tokens[segments[0]],
                  case let .segment(secondHeader, secondSealed) = tokens[segments[1]] else { return tokens }
            tokens[segments[0]] = .segment(header: firstHeader, sealed: secondSealed)
            tokens[segments[1]] = .segment(header: secondHeader, sealed: firstSealed)
            return tokens
        }
        Self.expectEndedAfterPing(outcome)
    }

    /// A marker inserted before an ordinary transport message, which then stands where a
    /// header is due.
    @Test func anInsertedMarkerEndsTheChannel() async throws {
        let outcome = try await deliver { tokens, _ in
            var tokens = tokens
            let first = try #require(Self.segmentIndices(tokens).first)
            // The message after the first segment holds the Pong and the second chunk's fields.
            guard case let .message(bytes) = tokens[first + 1] else { return tokens }
            tokens[first + 1] = .message(SegmentHeader.marker + bytes)
            return tokens
        }
        // The first chunk is whole before the inserted marker.
        #expect(outcome.ending != nil)
        #expect(outcome.received.count == 2)
        #expect(!outcome.received.contains(.pong(.init(nonce: 2))))
    }

    /// A co-recipient of the same broadcast knows the first segment's key and length, so it
    /// can seal bytes of its own choosing in its place: here, frames — an Offer-sized Error
    /// and a Ping — as a splice would need them read. They can only ever come out as the
    /// data of the Chunk the sender framed (which the receiver checks against its hash):
    /// never as frames.
    @Test func aForgedSegmentIsOnlyEverChunkData() async throws {
        let outcome = try await deliver { tokens, sent in
            var tokens = tokens
            let first = try #require(Self.segmentIndices(tokens).first)
            guard case let .segment(header, _) = tokens[first] else { return tokens }
            let seal = sent.seals[0]
            var forged = try WireMessage.ping(.init(nonce: 666)).frame().encoded()
                + WireMessage.error(.init(code: .unexpectedMessage, message: "forged")).frame().encoded()
            forged += [UInt8](repeating: 0x41, count: seal.plaintextCount - forged.count)
            tokens[first] = .segment(header: header, sealed: Self.reseal(forged, like: seal))
            return tokens
        }
        #expect(!outcome.received.contains(.ping(.init(nonce: 666))))
        #expect(!outcome.received.contains { if case .error = $0 { true } else { false } })
        // The forged bytes arrive as the first chunk's data, under the sender's own fields,
        // and that data does not hash to the chunk's content: the receiver refuses it.
        guard outcome.received.count >= 2, case let .chunk(chunk) = outcome.received[1],
              case let .chunk(sent) = outcome.sent.messages[1] else {
            Issue.record("expected the first chunk, forged, as a Chunk: got \(outcome.received)")
            return
        }
        #expect(chunk.offerID == sent.offerID && chunk.contentID == sent.contentID && chunk.chunkIndex == sent.chunkIndex)
        #expect(chunk.payload != sent.payload)
        #expect(Blake2b.hash(Array(chunk.payload.data)) != sent.contentID.hash)
        // The rest of the stream is untouched and arrives as sent.
        #expect(Array(outcome.received.dropFirst(2)).count == 3)
    }
}
