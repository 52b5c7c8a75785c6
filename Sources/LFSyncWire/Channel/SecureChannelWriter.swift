import LFSyncCrypto
import LFSyncSystem
import LFSyncTransport

/// The sending half: owns the sending cipher state and its nonce.
///
/// One send at a time, in the order they were called: a message is sealed
/// with the next nonce and handed to the connection before the next one is
/// sealed. Otherwise (actors are reentrant) a second send could seal nonce
/// n+1 and reach the connection while the first, sealed with n, is still on
/// its way there — and the peer, which decrypts in nonce order, would see
/// tampered data.
actor SecureChannelWriter {
    private let connection: any Connection
    private var cipher: NoiseCipherState
    private(set) var bytesWritten: UInt64 = 0
    /// Frame-stream bytes sealed so far: where the next shared segment would begin.
    private var streamOffset: UInt64 = 0
    private var failed: SecureChannelError?
    /// Whether a send holds the turn; the others wait here, in order.
    private let turn = Monitor(false)

    package init(connection: any Connection, cipher: NoiseCipherState) {
        self.connection = connection
        self.cipher = cipher
    }

    private(set) var peerCapabilities: WireCapabilities = []

    /// The cipher of the shared segments the peer accepts; nil unless it said it does.
    var segmentCipher: NoiseCipher? { peerCapabilities.contains(.sharedSegments) ? cipher.cipher : nil }

    func peerAnnounced(_ capabilities: WireCapabilities) {
        peerCapabilities = capabilities
    }

    package func send(_ messages: [WireMessage]) async throws(SecureChannelError) {
        if let failed { throw failed }
        let parts: [FrameSealer.Part]
        do { parts = try FrameSealer.parts(of: messages, segmentCipher: segmentCipher) } catch { throw .unencodable(error) }
        try await send(parts: parts)
    }

    package func send(frames: [Frame]) async throws(SecureChannelError) {
        if let failed { throw failed }
        try await send(parts: [.stream(FrameSealer.pieces(of: frames))])
    }

    private func send(parts: [FrameSealer.Part]) async throws(SecureChannelError) {
        // Waited for even by a cancelled task: its caller's cancellation does not abandon a
        // send; only the connection failing does.
        await turn.wait { (taken: inout Bool) -> Void? in
            guard !taken else { return nil }
            taken = true
            return ()
        }
        defer { turn.withLock { $0 = false } }
        if let failed { throw failed }
        let outputs: [[UInt8]]
        do {
            outputs = try FrameSealer.seal(parts, with: &cipher, streamOffset: &streamOffset)
        } catch {
            failed = .handshake(error)
            throw .handshake(error)
        }
        for output in outputs {
            do {
                try await connection.send(output)
            } catch {
                failed = .transport(error)
                throw .transport(error)
            }
            bytesWritten += UInt64(output.count)
        }
    }
}
