import Foundation
import Testing
@testable import LocalFirstSync
@testable import LFSyncContent
@testable import LFSyncCrypto
@testable import LFSyncSystem
@testable import LFSyncTCP
@testable import LFSyncTransport
@testable import LFSyncWire
@testable import LocalFirstSyncTesting

/// The secure channel over both transports: identities proven, messages
/// intact, and every hostile or broken peer ends in a typed error.
@Suite struct SecureChannelTests {
    let alice = DeviceIdentity.generate()
    let bob = DeviceIdentity.generate()

    /// A connected, handshaken pair over the given transport.
    static func channelPair(
        transport: any Transport, listenOn address: PeerAddress,
        initiator: DeviceIdentity, responder: DeviceIdentity, expected: DeviceID? = nil
    ) async throws -> (client: SecureChannel, server: SecureChannel) {
        let listener = try await transport.listen(on: address)
        defer { Task { await listener.close() } }
        async let accepted = SecureChannel.accept(over: try await listener.accept(), identity: responder)
        let client = try await SecureChannel.initiate(
            over: try await transport.connect(to: listener.localAddress, timeout: .seconds(5)),
            identity: initiator, expectedPeer: expected)
        return (client, try await accepted)
    }

    static func memoryAddress(_ name: String = UUID().uuidString) -> PeerAddress {
        PeerAddress(host: "mem-\(name)", port: 1)
    }

    /// The faster cipher when both ends can use it, ChaChaPoly when either side lacks AES
    /// instructions (simulated by what each side offers), and the bytes arrive intact.
    @Test(.enabled(if: NoiseCipher.aesGCM.isAvailable, "this processor has no AES-NI/CLMUL, so lfsync never offers AESGCM here"), arguments: [
        ([NoiseCipher.aesGCM, .chaChaPoly], [NoiseCipher.aesGCM, .chaChaPoly], NoiseCipher.aesGCM),
        ([.chaChaPoly], [.aesGCM, .chaChaPoly], .chaChaPoly),
        ([.aesGCM, .chaChaPoly], [.chaChaPoly], .chaChaPoly),
    ])
    func ciphersAreNegotiated(offered: [NoiseCipher], accepted: [NoiseCipher], expected: NoiseCipher) async throws {
        let transport = InMemoryTransport()
        let listener = try await transport.listen(on: Self.memoryAddress())
        async let server = SecureChannel.accept(over: try await listener.accept(), identity: bob, ciphers: accepted)
        let client = try await SecureChannel.initiate(
            over: try await transport.connect(to: listener.localAddress, timeout: .seconds(5)), identity: alice, ciphers: offered)
        let accepting = try await server
        #expect(client.cipher == expected && accepting.cipher == expected)
        let chunk = WireMessage.chunk(.init(offerID: 1, contentID: ContentID(hash: Blake2b.hash([])), fileIndex: 0, chunkIndex: 0,
                                            payload: .raw((0..<200_000).map { UInt8(truncatingIfNeeded: $0) })))
        try await client.send(chunk)
        #expect(try await accepting.receive() == chunk)
        await client.close()
        await accepting.close()
        await listener.close()
    }

    /// Whoever rewrites the opening (here: the offer, to force ChaChaPoly) breaks the handshake,
    /// because both cleartext messages are the prologue; an opening that is no offer at all is
    /// refused with a clear error.
    @Test func tamperedOrForeignOpeningsFail() async throws {
        let transport = InMemoryTransport()
        let listener = try await transport.listen(on: Self.memoryAddress())
        let server = Task { [bob] in try await SecureChannel.accept(over: try await listener.accept(), identity: bob) }
        let raw = try await transport.connect(to: listener.localAddress, timeout: .seconds(5))
        var opening: [UInt8] = []
        NoiseMessageFramer.prefixed(Array("lfsync/1".utf8) + [1], into: &opening)
        try await raw.send(opening)
        await #expect(throws: SecureChannelError.self) { _ = try await server.value }
        #expect(throws: SecureChannelError.self) { try CipherOffer.choose(from: Array("lfsync/2".utf8) + [0], preferring: NoiseCipher.usable) }
        #expect(throws: SecureChannelError.self) { try CipherOffer.chosen([NoiseCipher.aesGCM.rawValue], offered: [.chaChaPoly]) }

        // A downgrade in flight: the responder sees an offer of ChaChaPoly only, the initiator
        // offered both. Each side's prologue differs, so the handshake fails.
        let offered = CipherOffer.encode([.aesGCM, .chaChaPoly]), seen = CipherOffer.encode([.chaChaPoly])
        let choice = [NoiseCipher.chaChaPoly.rawValue]
        var initiator = try NoiseHandshake(pattern: .xx, role: .initiator, prologue: offered + choice, staticKeyPair: alice.keyPair)
        var responder = try NoiseHandshake(pattern: .xx, role: .responder, prologue: seen + choice, staticKeyPair: bob.keyPair)
        _ = try responder.readMessage(try initiator.writeMessage())
        let second = try responder.writeMessage()
        #expect(throws: NoiseError.self) { _ = try initiator.readMessage(second) }
        await raw.close()
        await listener.close()
    }

    @Test func handshakeProvesBothIdentities() async throws {
        let (client, server) = try await Self.channelPair(
            transport: InMemoryTransport(), listenOn: Self.memoryAddress(),
            initiator: alice, responder: bob, expected: bob.deviceID)
        #expect(client.remoteDeviceID == bob.deviceID)
        #expect(server.remoteDeviceID == alice.deviceID)
        #expect(client.handshakeHash == server.handshakeHash)
        #expect(client.handshakeHash.count == 64)
        await client.close()
        await server.close()
    }

    @Test func messagesRoundTripIncludingLargeChunks() async throws {
        let (client, server) = try await Self.channelPair(
            transport: InMemoryTransport(), listenOn: Self.memoryAddress(), initiator: alice, responder: bob)
        var generator = SplitMix64(seed: 3)
        let data = generator.bytes(3 << 20)  // 3 MiB: one frame spans ~48 Noise messages
        let chunk = WireMessage.chunk(.init(
            offerID: 7, contentID: ContentID(hash: Blake2b.hash(data)), fileIndex: 0, chunkIndex: 2,
            payload: .raw(data)))
        let messages: [WireMessage] = [.ping(.init(nonce: 1)), chunk, .pong(.init(nonce: 2))]
        async let received: [WireMessage] = {
            var out: [WireMessage] = []
            while out.count < 3, let message = try await server.receive() { out.append(message) }
            return out
        }()
        try await client.send(messages)
        #expect(try await received == messages)
        // Clean close between messages reads as end of stream, not an error.
        await client.close()
        #expect(try await server.receive() == nil)
        #expect(await client.bytesSent > UInt64(data.count))
    }

    @Test func pinnedIdentityMismatchIsRefusedBeforeRevealingOurs() async throws {
        let mallory = DeviceIdentity.generate()
        let transport = InMemoryTransport()
        let address = Self.memoryAddress()
        let listener = try await transport.listen(on: address)
        async let serverSide: (any Error)? = {
            do {
                _ = try await SecureChannel.accept(over: try await listener.accept(), identity: mallory)
                return nil
            } catch { return error }
        }()
        await #expect {
            _ = try await SecureChannel.initiate(
                over: try await transport.connect(to: address, timeout: .seconds(5)),
                identity: alice, expectedPeer: bob.deviceID)
        } throws: { error in
            guard case let .peerMismatch(expected, actual)? = error as? SecureChannelError else { return false }
            return expected == bob.deviceID && actual == mallory.deviceID
        }
        // Mallory never got message 3, so she never learned Alice's key.
        let serverError = await serverSide
        #expect(serverError != nil)
        await listener.close()
    }

    @Test(.timeLimit(.minutes(1))) func silentPeerTimesOut() async throws {
        let transport = InMemoryTransport()
        let address = Self.memoryAddress()
        let listener = try await transport.listen(on: address)
        let connection = try await transport.connect(to: address, timeout: .seconds(5))
        let silent = try await listener.accept()
        // The outcome, not the speed, is under test: a timing bound would be flaky on a loaded machine.
        await #expect {
            _ = try await SecureChannel.initiate(over: connection, identity: alice, timeout: .milliseconds(300))
        } throws: { error in
            guard case .handshakeTimedOut? = error as? SecureChannelError else { return false }
            return true
        }
        await silent.close()
        await listener.close()
    }

    /// A peer that completes the handshake, then sends a frame header
    /// claiming 4 GiB: refused after 5 bytes, nothing allocated for it.
    @Test func hostileFrameLengthIsRefused() async throws {
        let transport = InMemoryTransport()
        let address = Self.memoryAddress()
        let listener = try await transport.listen(on: address)
        async let server = SecureChannel.accept(over: try await listener.accept(), identity: bob)
        let raw = try await transport.connect(to: address, timeout: .seconds(5))
        var framer = NoiseMessageFramer()
        func sendPrefixed(_ message: [UInt8]) async throws {
            var out: [UInt8] = []
            NoiseMessageFramer.prefixed(message, into: &out)
            try await raw.send(out)
        }
        func receivePrefixed() async throws -> [UInt8] {
            while true {
                if let message = framer.next() { return message }
                framer.append(try #require(try await raw.receive()))
            }
        }
        let offer = CipherOffer.encode([.chaChaPoly])
        try await sendPrefixed(offer)
        let choice = try await receivePrefixed()
        #expect(choice == [NoiseCipher.chaChaPoly.rawValue])
        var handshake = try NoiseHandshake(pattern: .xx, role: .initiator, prologue: offer + choice, staticKeyPair: alice.keyPair)
        try await sendPrefixed(try handshake.writeMessage())
        _ = try handshake.readMessage(try await receivePrefixed())
        try await sendPrefixed(try handshake.writeMessage())
        var transportState = try handshake.split()
        try await sendPrefixed(try transportState.encrypt([0x04, 0xFF, 0xFF, 0xFF, 0xFF]))
        let channel = try await server
        await #expect {
            _ = try await channel.receive()
        } throws: { error in
            guard case .frame(.frameTooLarge)? = error as? SecureChannelError else { return false }
            return true
        }
        await raw.close()
        await listener.close()
    }

    @Test func tamperedCiphertextEndsTheChannel() async throws {
        let transport = InMemoryTransport()
        let address = Self.memoryAddress()
        let listener = try await transport.listen(on: address)
        async let server = SecureChannel.accept(over: try await listener.accept(), identity: bob)
        let tampering = TamperingConnection(try await transport.connect(to: address, timeout: .seconds(5)))
        let client = try await SecureChannel.initiate(over: tampering, identity: alice)
        let channel = try await server
        tampering.flipNextSend(atOffset: 10)
        try await client.send(.ping(.init(nonce: 9)))
        await #expect {
            _ = try await channel.receive()
        } throws: { error in
            guard case .handshake(.decryptFailed)? = error as? SecureChannelError else { return false }
            return true
        }
        await client.close()
        await listener.close()
    }

    @Test func realTCPOnLoopback() async throws {
        let (client, server) = try await Self.channelPair(
            transport: TCPTransport(), listenOn: PeerAddress(host: "127.0.0.1", port: 0),
            initiator: alice, responder: bob, expected: bob.deviceID)
        var generator = SplitMix64(seed: 11)
        let payloads = (0..<40).map { _ in generator.bytes(1 << 20) }
        async let received: Hash256 = {
            var hasher = Blake2b()
            var count = 0
            while count < payloads.count, case let .chunk(chunk)? = try await server.receive() {
                try chunk.payload.decoded().withUnsafeBytes { hasher.update($0) }
                count += 1
            }
            return hasher.finalizeHash()
        }()
        var sent = Blake2b()
        for (index, payload) in payloads.enumerated() {
            sent.update(payload)
            try await client.send(.chunk(.init(
                offerID: 1, contentID: ContentID(hash: Blake2b.hash(payload)), fileIndex: 0,
                chunkIndex: UInt32(index), payload: .raw(payload))))
        }
        #expect(try await received == sent.finalizeHash())
        await client.close()
        await server.close()
    }
}

/// Wraps a connection and corrupts one byte of the next send: a man in the middle.
final class TamperingConnection: Connection, @unchecked Sendable {
    private let inner: any Connection
    private let lock = NSLock()
    private var flipOffset: Int?

    init(_ inner: any Connection) { self.inner = inner }

    var remoteAddress: PeerAddress? { inner.remoteAddress }

    func flipNextSend(atOffset offset: Int) {
        lock.withLock { flipOffset = offset }
    }

    func send(_ bytes: [UInt8]) async throws(TransportError) {
        var bytes = bytes
        if let offset = lock.withLock({ () -> Int? in defer { flipOffset = nil }; return flipOffset }), offset < bytes.count {
            bytes[offset] ^= 0x40
        }
        try await inner.send(bytes)
    }

    func receive() async throws(TransportError) -> [UInt8]? { try await inner.receive() }
    func close() async { await inner.close() }
}
