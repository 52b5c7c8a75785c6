import LFSyncCrypto
import LFSyncSystem
import LFSyncTransport

/// An authenticated, encrypted message channel to one peer:
/// `Noise_XX_25519_{AESGCM|ChaChaPoly}_BLAKE2b` over any `Connection`, carrying
/// `WireMessage` frames (PROTOCOL.md, "Handshake and prologue").
///
/// Sending and receiving are independent (one actor each), so a peer's send
/// task and receive task never wait for each other.
package final class SecureChannel: Sendable {
    /// Opens the initiator's cipher offer: `lfsync/` and the protocol version's digit.
    package static let protocolTag = Array("lfsync/3".utf8)
    package static let defaultHandshakeTimeout: Duration = .seconds(10)

    /// Who is on the other end, proven by the handshake.
    package let remoteDeviceID: DeviceID
    package let handshakeHash: [UInt8]
    /// The cipher both peers chose (AESGCM when both processors have AES instructions).
    package let cipher: NoiseCipher
    package let connection: any Connection
    private let writer: SecureChannelWriter
    private let reader: SecureChannelReader

    private init(connection: any Connection, transport: NoiseTransport, framer: NoiseMessageFramer) throws(SecureChannelError) {
        guard let remoteKey = transport.remoteStaticKey, let sender = transport.sender, let receiver = transport.receiver else {
            throw .handshake(.handshakeIncomplete)
        }
        self.connection = connection
        remoteDeviceID = DeviceID(publicKey: remoteKey)
        handshakeHash = transport.handshakeHash
        cipher = sender.cipher
        writer = SecureChannelWriter(connection: connection, cipher: sender)
        reader = SecureChannelReader(connection: connection, cipher: receiver, framer: framer)
    }

    /// Runs the handshake as the side that dialled.
    ///
    /// - Parameter expectedPeer: when set, the channel is refused unless the
    ///   peer proves this Device ID. The check happens on handshake message 2,
    ///   *before* we reveal our own static key in message 3.
    /// - Parameter ciphers: what we offer (by default every cipher this machine can use).
    package static func initiate(
        over connection: any Connection, identity: DeviceIdentity, expectedPeer: DeviceID? = nil,
        ciphers: [NoiseCipher] = NoiseCipher.usable, timeout: Duration = defaultHandshakeTimeout,
        protocolTag: [UInt8] = SecureChannel.protocolTag
    ) async throws(SecureChannelError) -> SecureChannel {
        try await withDeadline(timeout, clock: ContinuousClock(), connection: connection) { () async throws(SecureChannelError) -> SecureChannel in
            var framer = NoiseMessageFramer()
            let offer = CipherOffer.encode(ciphers, tag: protocolTag)
            try await sendHandshake(offer, on: connection)
            let choice: [UInt8]
            do throws(SecureChannelError) { choice = try await receiveHandshake(on: connection, framer: &framer) } catch {
                // A version-2 lfsync closes on a version-3 offer without a word.
                guard case .truncated = error else { throw error }
                throw .incompatiblePeer("it closed the connection at our lfsync/3 cipher offer: it may run an older lfsync (protocol version 2), which cannot talk to this one")
            }
            let cipher = try CipherOffer.chosen(choice, offered: ciphers)
            var handshake = try noise { () throws(NoiseError) in
                try NoiseHandshake(pattern: .xx, role: .initiator, prologue: offer + choice, cipher: cipher, staticKeyPair: identity.keyPair)
            }
            try await sendHandshake(try noise { () throws(NoiseError) in try handshake.writeMessage() }, on: connection)
            let second = try await receiveHandshake(on: connection, framer: &framer)
            _ = try noise { () throws(NoiseError) in try handshake.readMessage(second) }
            if let expectedPeer, let key = handshake.remoteStaticKey, !expectedPeer.matches(publicKey: key) {
                throw .peerMismatch(expected: expectedPeer, actual: DeviceID(publicKey: key))
            }
            try await sendHandshake(try noise { () throws(NoiseError) in try handshake.writeMessage() }, on: connection)
            let transport: NoiseTransport
            do throws(NoiseError) { transport = try handshake.split() } catch { throw .handshake(error) }
            return try SecureChannel(connection: connection, transport: transport, framer: framer)
        }
    }

    /// Runs the handshake as the side that accepted the connection. The
    /// caller decides afterwards whether `remoteDeviceID` is welcome.
    /// - Parameter ciphers: what we accept, in order of preference (by default
    ///   every cipher this machine can use, fastest first).
    package static func accept(
        over connection: any Connection, identity: DeviceIdentity,
        ciphers: [NoiseCipher] = NoiseCipher.usable, timeout: Duration = defaultHandshakeTimeout,
        clock: any Clock<Duration> = ContinuousClock()
    ) async throws(SecureChannelError) -> SecureChannel {
        try await withDeadline(timeout, clock: clock, connection: connection) { () async throws(SecureChannelError) -> SecureChannel in
            var framer = NoiseMessageFramer()
            let offer = try await receiveHandshake(on: connection, framer: &framer)
            let cipher = try CipherOffer.choose(from: offer, preferring: ciphers)
            let choice = [cipher.rawValue]
            try await sendHandshake(choice, on: connection)
            var handshake = try noise { () throws(NoiseError) in
                try NoiseHandshake(pattern: .xx, role: .responder, prologue: offer + choice, cipher: cipher, staticKeyPair: identity.keyPair)
            }
            let first = try await receiveHandshake(on: connection, framer: &framer)
            _ = try noise { () throws(NoiseError) in try handshake.readMessage(first) }
            try await sendHandshake(try noise { () throws(NoiseError) in try handshake.writeMessage() }, on: connection)
            let third = try await receiveHandshake(on: connection, framer: &framer)
            _ = try noise { () throws(NoiseError) in try handshake.readMessage(third) }
            let transport: NoiseTransport
            do throws(NoiseError) { transport = try handshake.split() } catch { throw .handshake(error) }
            return try SecureChannel(connection: connection, transport: transport, framer: framer)
        }
    }

    package func send(_ message: WireMessage) async throws(SecureChannelError) {
        try await writer.send([message])
    }

    /// Sends several messages in as few Noise messages and writes as possible.
    package func send(_ messages: [WireMessage]) async throws(SecureChannelError) {
        try await writer.send(messages)
    }

    /// Sends frames exactly as given, without the per-message field checks of
    /// `send(_:)`. This is the layer a conformance or hostile-peer test client
    /// needs to put bytes on the wire that lfsync itself would never produce;
    /// the receiving side must cope with anything sent this way.
    package func send(frames: [Frame]) async throws(SecureChannelError) {
        try await writer.send(frames: frames)
    }

    /// The next message; nil when the peer closed the connection cleanly between messages.
    package func receive() async throws(SecureChannelError) -> WireMessage? {
        try await receiveWithLength()?.message
    }

    /// The next message with the length of the frame it came in, for callers
    /// that buffer messages and must bound their memory by it.
    package func receiveWithLength() async throws(SecureChannelError) -> (message: WireMessage, frameLength: Int)? {
        if let early = early.withLock({ stash in defer { stash = nil }; return stash }) {
            return try await early.outcome.wait().get()
        }
        return try await reader.receive()
    }

    /// A receive started before anyone asked for the next message, whose result the next
    /// `receive` takes (`receiveEarly()`).
    private let early = LockedState<EarlyReceive?>(nil)

    /// The next message, read now by a task of its own: while a person decides whether to
    /// let a device in, whatever it sends is seen as it arrives (nothing may come before the
    /// decision), and is not lost when the decision comes first: the channel's next
    /// `receive` returns it. One at a time; the caller receives nothing else meanwhile.
    package func receiveEarly() -> EarlyReceive {
        let reader = reader
        let receive = EarlyReceive()
        early.withLock { $0 = receive }
        // Ends when a message, the end of the stream or a failure arrives (closing the
        // connection ends it too).
        Task {
            do throws(SecureChannelError) { receive.outcome.resolve(.success(try await reader.receive())) } catch {
                receive.outcome.resolve(.failure(error))
            }
        }
        return receive
    }

    /// Whether the peer sent something right behind its last message (in the same read), or
    /// a message an early receive already brought waits to be read.
    package var hasUnreadInput: Bool {
        get async {
            if case .success(.some)? = early.withLock({ $0 })?.outcome.value { return true }
            return await reader.hasUnreadInput
        }
    }

    /// Sets the largest frame accepted from the peer, from the next frame on.
    /// Before the connection decision only small messages are legitimate
    /// (`WireProtocol.setUpFrameLimit`); afterwards the default allows chunks.
    package func limitIncomingFrames(to length: Int) async {
        await reader.limitFrames(to: length)
    }

    /// From now on, accepts shared segments from the peer (PROTOCOL.md, "Shared
    /// segments"): call before sending the Hello that announces it.
    package func acceptSharedSegments() async {
        await reader.acceptSegments()
    }

    /// Notes what the peer's Hello announced. From then on, when it includes
    /// shared segments, chunk data sealed once for a broadcast with this
    /// channel's cipher goes as a segment.
    package func peerAnnounced(_ capabilities: WireCapabilities) async {
        await writer.peerAnnounced(capabilities)
    }

    /// What the peer's Hello announced (nothing until it has been noted).
    package var peerCapabilities: WireCapabilities { get async { await writer.peerCapabilities } }

    /// The cipher of the shared segments this channel sends: nil unless the peer said it accepts them.
    package var sharedSegmentCipher: NoiseCipher? { get async { await writer.segmentCipher } }

    /// Bytes of ciphertext written and read so far (including framing): lfsync's own wire counters.
    package var bytesSent: UInt64 { get async { await writer.bytesWritten } }
    package var bytesReceived: UInt64 { get async { await reader.bytesRead } }

    package func close() async {
        await connection.close()
    }

    // MARK: - Handshake plumbing

    private static func noise<T>(_ body: () throws(NoiseError) -> T) throws(SecureChannelError) -> T {
        do { return try body() } catch { throw .handshake(error) }
    }

    private static func sendHandshake(_ message: [UInt8], on connection: any Connection) async throws(SecureChannelError) {
        var output: [UInt8] = []
        NoiseMessageFramer.prefixed(message, into: &output)
        do { try await connection.send(output) } catch { throw .transport(error) }
    }

    private static func receiveHandshake(on connection: any Connection, framer: inout NoiseMessageFramer) async throws(SecureChannelError) -> [UInt8] {
        while true {
            if let message = framer.next() { return message }
            let bytes: [UInt8]?
            do { bytes = try await connection.receive() } catch { throw .transport(error) }
            guard let bytes else { throw .truncated }
            framer.append(bytes)
        }
    }

    /// Runs the handshake, closing the connection when it fails or overruns
    /// `timeout` (closing is what unblocks a pending receive; a peer past its
    /// deadline is owed nothing, so the close is abortive). The handshake and
    /// the `Deadline` each claim one flag; whichever claims it first decides,
    /// so a handshake that completes as the deadline fires is either kept (and
    /// its connection left alone) or failed as timed out, never both.
    private static func withDeadline<T: Sendable>(
        _ timeout: Duration, clock: any Clock<Duration>, connection: any Connection,
        _ body: () async throws(SecureChannelError) -> T
    ) async throws(SecureChannelError) -> T {
        let decided = AtomicFlag()
        let deadline = Deadline.after(timeout, on: clock) {
            if decided.claim() { await connection.abort() }
        }
        let outcome: Result<T, SecureChannelError>
        do throws(SecureChannelError) { outcome = .success(try await body()) } catch { outcome = .failure(error) }
        deadline.cancel()
        switch decided.claim() ? outcome : .failure(.handshakeTimedOut) {
        case let .success(value): return value
        case let .failure(error):
            await connection.close()
            throw error
        }
    }
}

/// A receive under way that nobody is waiting on yet (`SecureChannel.receiveEarly()`).
package final class EarlyReceive: Sendable {
    /// What it brought: a message, nil for the end of the stream, or the failure.
    package let outcome = Eventual<Result<(message: WireMessage, frameLength: Int)?, SecureChannelError>>()
}
