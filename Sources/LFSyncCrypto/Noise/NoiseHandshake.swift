/// Noise's `HandshakeState` (spec §5.3) for any `NoisePattern`, run message by
/// message by the caller, who owns the socket.
///
/// Any error after a message started being processed poisons the handshake
/// (`handshakeFailed` from then on): the transcript has already absorbed part
/// of the message, so continuing could only produce garbage or an oracle.
/// Errors raised before any state changed (wrong turn, oversized payload) do
/// not poison it.
package struct NoiseHandshake: Sendable {
    package enum Role: Sendable, Equatable {
        case initiator, responder
    }

    /// What the caller should do next.
    package enum Action: Sendable, Equatable {
        /// Call `writeMessage(payload:)` and send the result.
        case write
        /// Receive a message and call `readMessage(_:)`.
        case read
        /// The handshake is done: call `split()`.
        case split
        /// An earlier error ended the handshake.
        case failed
    }

    private enum Phase: Sendable {
        case awaiting(message: Int)
        case complete
        case failed
    }

    package let pattern: NoisePattern
    package let role: Role
    private var symmetric: NoiseSymmetricState
    private let localStatic: NoiseKeyPair?
    private var localEphemeral: NoiseKeyPair?
    /// The peer's static key: supplied for pre-message patterns, learned from
    /// the handshake otherwise. Authenticated only once the handshake is complete.
    package private(set) var remoteStaticKey: [UInt8]?
    private var remoteEphemeralKey: [UInt8]?
    private var phase: Phase

    /// Starts a handshake (`Initialize`).
    ///
    /// - Parameters:
    ///   - prologue: data both sides must agree on (e.g. a protocol version);
    ///     mixed into the transcript, so a mismatch fails the handshake.
    ///   - cipher: the suite's cipher (both sides must use the same; ChaChaPoly is the default).
    ///   - staticKeyPair: our identity, required exactly when the pattern uses it.
    ///   - remoteStaticKey: the peer's key, required exactly when the pattern
    ///     has it as a pre-message (NK, XK, IK, KK, ...). Passing one to a
    ///     pattern that transmits it (XX) throws `unexpectedKey`: it would not
    ///     be checked. Compare `remoteStaticKey` after the handshake instead.
    package init(
        pattern: NoisePattern,
        role: Role,
        prologue: [UInt8] = [],
        cipher: NoiseCipher = .chaChaPoly,
        staticKeyPair: NoiseKeyPair? = nil,
        remoteStaticKey: [UInt8]? = nil
    ) throws(NoiseError) {
        try self.init(
            pattern: pattern, role: role, prologue: prologue, cipher: cipher,
            staticKeyPair: staticKeyPair, remoteStaticKey: remoteStaticKey, ephemeralKeyPair: nil)
    }

    /// Test hook: `ephemeralKeyPair` replaces the random ephemeral so the
    /// published vectors can be reproduced. Never public — a reused ephemeral
    /// key destroys forward secrecy.
    package init(
        pattern: NoisePattern,
        role: Role,
        prologue: [UInt8],
        cipher: NoiseCipher = .chaChaPoly,
        staticKeyPair: NoiseKeyPair?,
        remoteStaticKey: [UInt8]?,
        ephemeralKeyPair: NoiseKeyPair?
    ) throws(NoiseError) {
        let localPreMessage = role == .initiator ? pattern.initiatorPreMessage : pattern.responderPreMessage
        let remotePreMessage = role == .initiator ? pattern.responderPreMessage : pattern.initiatorPreMessage

        if pattern.usesStaticKey(of: role) {
            guard staticKeyPair != nil else { throw .missingKey(.localStatic) }
        } else if staticKeyPair != nil {
            throw .unexpectedKey(.localStatic)
        }
        if remotePreMessage.contains(.s) {
            guard let remoteStaticKey else { throw .missingKey(.remoteStatic) }
            guard remoteStaticKey.count == Noise.dhLength else { throw .invalidKeyLength(remoteStaticKey.count) }
        } else if remoteStaticKey != nil {
            throw .unexpectedKey(.remoteStatic)
        }
        // No built-in pattern has an ephemeral pre-message; refuse rather than
        // invent an API for supplying one.
        if localPreMessage.contains(.e) { throw .missingKey(.localEphemeral) }
        if remotePreMessage.contains(.e) { throw .missingKey(.remoteEphemeral) }

        self.pattern = pattern
        self.role = role
        self.localStatic = staticKeyPair
        self.localEphemeral = ephemeralKeyPair
        self.remoteStaticKey = remoteStaticKey
        self.remoteEphemeralKey = nil
        self.phase = .awaiting(message: 0)
        self.symmetric = NoiseSymmetricState(protocolName: pattern.protocolName(cipher: cipher), cipher: cipher)
        symmetric.mixHash(prologue)

        // Pre-message public keys enter the transcript initiator's first,
        // whichever side we are.
        for (owner, tokens) in [(Role.initiator, pattern.initiatorPreMessage), (.responder, pattern.responderPreMessage)] {
            for token in tokens where token == .s {
                let key = owner == role ? staticKeyPair?.publicKey : remoteStaticKey
                guard let key else { throw .missingKey(owner == role ? .localStatic : .remoteStatic) }
                symmetric.mixHash(key)
            }
        }
    }

    package var nextAction: Action {
        switch phase {
        case let .awaiting(message): pattern.sender(ofMessage: message) == role ? .write : .read
        case .complete: .split
        case .failed: .failed
        }
    }

    package var isComplete: Bool { nextAction == .split }

    /// The transcript hash `h`. After completion both sides hold the same
    /// value and it uniquely identifies the session (channel binding).
    package var handshakeHash: [UInt8] { symmetric.handshakeHash }

    /// `WriteMessage`: produces the next handshake message carrying `payload`.
    /// Payloads of early messages may be sent in clear or to an unauthenticated
    /// peer; see the spec's payload security table before putting secrets in them.
    package mutating func writeMessage(payload: [UInt8] = []) throws(NoiseError) -> [UInt8] {
        let index = try nextMessageIndex(for: role)
        let tokens = pattern.messages[index]
        let size = plannedSize(of: tokens, payloadCount: payload.count)
        guard size <= Noise.maxMessageLength else {
            throw .messageTooLarge(size: size, limit: Noise.maxMessageLength)
        }

        do throws(NoiseError) {
            var message: [UInt8] = []
            message.reserveCapacity(size)
            for token in tokens {
                switch token {
                case .e:
                    let ephemeral = localEphemeral ?? NoiseKeyPair.generate()
                    localEphemeral = ephemeral
                    message += ephemeral.publicKey
                    symmetric.mixHash(ephemeral.publicKey)
                case .s:
                    guard let localStatic else { throw .missingKey(.localStatic) }
                    message += try symmetric.encryptAndHash(localStatic.publicKey)
                case .ee, .es, .se, .ss:
                    symmetric.mixKey(try sharedSecret(for: token))
                }
            }
            message += try symmetric.encryptAndHash(payload)
            advance(past: index)
            return message
        } catch {
            phase = .failed
            throw error
        }
    }

    /// `ReadMessage`: processes the peer's next handshake message and returns
    /// its payload.
    package mutating func readMessage(_ message: [UInt8]) throws(NoiseError) -> [UInt8] {
        let remoteRole: Role = role == .initiator ? .responder : .initiator
        let index = try nextMessageIndex(for: remoteRole)
        guard message.count <= Noise.maxMessageLength else {
            throw .messageTooLarge(size: message.count, limit: Noise.maxMessageLength)
        }

        do throws(NoiseError) {
            var rest = message[...]
            func take(_ count: Int) throws(NoiseError) -> [UInt8] {
                guard rest.count >= count else { throw .truncated }
                defer { rest = rest.dropFirst(count) }
                return Array(rest.prefix(count))
            }
            for token in pattern.messages[index] {
                switch token {
                case .e:
                    let key = try take(Noise.dhLength)
                    remoteEphemeralKey = key
                    symmetric.mixHash(key)
                case .s:
                    let length = Noise.dhLength + (symmetric.hasKey ? Noise.tagLength : 0)
                    remoteStaticKey = try symmetric.decryptAndHash(try take(length))
                case .ee, .es, .se, .ss:
                    symmetric.mixKey(try sharedSecret(for: token))
                }
            }
            let payload = try symmetric.decryptAndHash(Array(rest))
            advance(past: index)
            return payload
        } catch {
            phase = .failed
            throw error
        }
    }

    /// `Split`: the transport ciphers, once the last handshake message has
    /// been written or read. Consuming, so the handshake secrets are released
    /// with it.
    package consuming func split() throws(NoiseError) -> NoiseTransport {
        switch phase {
        case .awaiting: throw .handshakeIncomplete
        case .failed: throw .handshakeFailed
        case .complete: break
        }
        let (initiatorToResponder, responderToInitiator) = symmetric.split()
        let isInitiator = role == .initiator
        return NoiseTransport(
            handshakeHash: symmetric.handshakeHash,
            remoteStaticKey: remoteStaticKey,
            sender: isInitiator ? initiatorToResponder : (pattern.isOneWay ? nil : responderToInitiator),
            receiver: isInitiator ? (pattern.isOneWay ? nil : responderToInitiator) : initiatorToResponder)
    }

    // MARK: - Internals

    /// The index of the next message if `sender` may send it now.
    private func nextMessageIndex(for sender: Role) throws(NoiseError) -> Int {
        switch phase {
        case .failed: throw .handshakeFailed
        case .complete: throw .unexpectedMessage
        case let .awaiting(index):
            guard pattern.sender(ofMessage: index) == sender else { throw .unexpectedMessage }
            return index
        }
    }

    private mutating func advance(past index: Int) {
        phase = index + 1 == pattern.messages.count ? .complete : .awaiting(message: index + 1)
    }

    /// The exact length `writeMessage` will produce, computed before touching
    /// any state so an oversized payload can be rejected without poisoning
    /// the handshake.
    private func plannedSize(of tokens: [NoisePattern.Token], payloadCount: Int) -> Int {
        var hasKey = symmetric.hasKey
        var size = 0
        for token in tokens {
            switch token {
            case .e: size += Noise.dhLength
            case .s: size += Noise.dhLength + (hasKey ? Noise.tagLength : 0)
            case .ee, .es, .se, .ss: hasKey = true
            }
        }
        return size + payloadCount + (hasKey ? Noise.tagLength : 0)
    }

    /// `DH` for a DH token, picking our half and the peer's half by role.
    private func sharedSecret(for token: NoisePattern.Token) throws(NoiseError) -> SecureBytes {
        guard let halves = token.dhUsesStatic else { preconditionFailure("\(token) is not a DH token") }
        let localIsStatic = role == .initiator ? halves.initiator : halves.responder
        let remoteIsStatic = role == .initiator ? halves.responder : halves.initiator

        let local: NoiseKeyPair
        if localIsStatic {
            guard let localStatic else { throw .missingKey(.localStatic) }
            local = localStatic
        } else {
            guard let localEphemeral else { throw .missingKey(.localEphemeral) }
            local = localEphemeral
        }
        let remote: [UInt8]
        if remoteIsStatic {
            guard let remoteStaticKey else { throw .missingKey(.remoteStatic) }
            remote = remoteStaticKey
        } else {
            guard let remoteEphemeralKey else { throw .missingKey(.remoteEphemeral) }
            remote = remoteEphemeralKey
        }
        return try local.sharedSecret(with: remote)
    }
}
