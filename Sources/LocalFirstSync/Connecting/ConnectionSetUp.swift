import LFSyncSystem
import LFSyncTransport
import LFSyncWire

/// What happens between the Noise handshake and a running `PeerSession`
/// (PROTOCOL.md, Session flow 1 and 2): the Hellos both ways, the version
/// check, and the connection decision — from either end. `LocalSync` owns the
/// sockets, the caps and the deadlines around it; this is only the exchange.
enum ConnectionSetUp {
    /// The Hello this device sends.
    static func hello(deviceName: String) -> WireMessage.Hello {
        WireMessage.Hello(
            protocolVersion: WireProtocol.version, deviceName: WireText.fitted(deviceName, maxBytes: WireMessage.Hello.maxDeviceNameBytes),
            softwareVersion: LFSyncVersion.current, capabilities: WireCapabilities.supported)
    }

    /// The initiator's side: sends our Hello, then waits for the responder's Hello and
    /// decision — through quiet spells, as its person may be deciding, but no longer than
    /// `WireProtocol.consentWait`.
    /// - Returns: the peer, as its handshake proved and its Hello named it.
    /// - Throws: `.declined` with the responder's reason, or what went wrong.
    static func initiate(on channel: SecureChannel, hello: WireMessage.Hello, address: PeerAddress) async throws -> Peer {
        // No set-up frame cap on this side: the responder may start a push right behind its
        // decision, in the same Noise message, and we chose to dial it.
        await acceptWhatWeAnnounce(hello, on: channel)
        try await channel.send(.hello(hello))
        let answers = ContinuousClock.now + WireProtocol.consentWait
        guard case let .hello(theirs)? = try await receive(on: channel, until: answers) else {
            throw SyncError.protocolViolation("expected Hello")
        }
        try checkVersion(theirs)
        await useWhatTheyAnnounce(theirs, on: channel)
        guard case let .connectionDecision(decision)? = try await receive(on: channel, until: answers) else {
            throw SyncError.protocolViolation("expected ConnectionDecision")
        }
        let peer = Peer(deviceID: channel.remoteDeviceID, name: theirs.deviceName, address: address)
        guard decision.accepted else { throw SyncError.declined(reason: decision.reason ?? "\(peer) declined the connection") }
        return peer
    }

    /// The responder's side, up to the initiator's Hello: anything else first, or a Hello
    /// that does not decode, is named to the peer with the Error the spec gives before the
    /// caller hangs up.
    static func receiveHello(on channel: SecureChannel) async throws -> WireMessage.Hello {
        let first: WireMessage?
        do { first = try await channel.receive() } catch {
            if let reply = error.errorReply { try? await channel.send(.error(reply)) }
            throw error
        }
        guard case let .hello(theirs)? = first else {
            let what = first.map { "\($0.type)" } ?? "nothing"
            try? await channel.send(.error(.init(code: .unexpectedMessage, message: "expected Hello, got \(what)")))
            throw SyncError.protocolViolation("expected Hello, got \(what)")
        }
        return theirs
    }

    /// The responder answers every Hello with its own, then refuses (Error 1) a version it
    /// does not speak.
    static func answer(_ theirs: WireMessage.Hello, with ours: WireMessage.Hello, on channel: SecureChannel) async throws {
        await acceptWhatWeAnnounce(ours, on: channel)
        await useWhatTheyAnnounce(theirs, on: channel)
        try await channel.send(.hello(ours))
        do { try checkVersion(theirs) } catch {
            try? await channel.send(.error(.init(code: .unsupportedProtocolVersion, message: WireText.fitted(error.description, maxBytes: 1000))))
            throw error
        }
    }

    /// Sends our decision; accepting lifts the set-up frame cap first, since the
    /// initiator may start a push right behind it.
    static func decide(_ accepted: Bool, on channel: SecureChannel, declinedBy deviceName: String, reason: String? = nil) async throws {
        if accepted { await channel.limitIncomingFrames(to: FrameDecoder.defaultMaxFrameLength) }
        let why = reason.map { "\(deviceName): \($0)" } ?? "\(deviceName) declined the connection"
        try await channel.send(.connectionDecision(.init(accepted: accepted, reason: accepted ? nil : WireText.fitted(why, maxBytes: WireMessage.ConnectionDecision.maxReasonBytes))))
    }

    // MARK: - Helpers

    /// Shared segments may follow our Hello at once: the channel takes them before we announce them.
    private static func acceptWhatWeAnnounce(_ ours: WireMessage.Hello, on channel: SecureChannel) async {
        if ours.capabilities.contains(.sharedSegments) { await channel.acceptSharedSegments() }
    }

    /// zstd and segments go only to a peer that said it takes them.
    private static func useWhatTheyAnnounce(_ theirs: WireMessage.Hello, on channel: SecureChannel) async {
        await channel.peerAnnounced(theirs.capabilities)
    }

    static func checkVersion(_ hello: WireMessage.Hello) throws(SyncError) {
        guard WireProtocol.supportedVersions.contains(hello.protocolVersion) else {
            throw .protocolViolation("peer speaks protocol version \(hello.protocolVersion); this lfsync speaks \(WireProtocol.version)")
        }
    }

    /// The next set-up message, waiting through idle timeouts but not past `deadline`.
    private static func receive(on channel: SecureChannel, until deadline: ContinuousClock.Instant) async throws(SecureChannelError) -> WireMessage? {
        while true {
            do throws(SecureChannelError) {
                return try await channel.receive()
            } catch {
                guard case .transport(.timedOut(.idle)) = error, ContinuousClock.now < deadline else { throw error }
            }
        }
    }
}
