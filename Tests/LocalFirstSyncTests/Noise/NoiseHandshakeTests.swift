import Testing
@testable import LocalFirstSync
@testable import LFSyncCrypto

@Suite("Noise handshake")
struct NoiseHandshakeTests {
    @Test("XX with generated keys authenticates both statics and agrees on the hash")
    func xxRoundTrip() throws {
        var pair = try NoisePair(.xx, initiatorPrologue: [1, 2, 3], responderPrologue: [1, 2, 3])
        var (initiator, responder) = try pair.complete()
        #expect(initiator.remoteStaticKey == pair.responderStatic.publicKey)
        #expect(responder.remoteStaticKey == pair.initiatorStatic.publicKey)
        #expect(initiator.handshakeHash == responder.handshakeHash)
        #expect(initiator.handshakeHash.count == 64)

        #expect(try responder.decrypt(try initiator.encrypt([42], ad: [7]), ad: [7]) == [42])
        #expect(try initiator.decrypt(try responder.encrypt([], ad: [])) == [])
    }

    @Test("every built-in pattern completes and carries transport traffic", arguments: NoisePattern.all.map(\.name))
    func everyPattern(_ name: String) throws {
        let pattern = try #require(NoisePattern(name: name))
        var pair = try NoisePair(pattern)
        var (initiator, responder) = try pair.complete()
        #expect(initiator.handshakeHash == responder.handshakeHash)
        #expect(try responder.decrypt(try initiator.encrypt(Array("hello".utf8))) == Array("hello".utf8))
        if pattern.isOneWay {
            #expect(throws: NoiseError.unexpectedMessage) { try responder.encrypt([1]) }
            #expect(throws: NoiseError.unexpectedMessage) { try initiator.decrypt([UInt8](repeating: 0, count: 17)) }
        } else {
            #expect(try initiator.decrypt(try responder.encrypt([9, 9])) == [9, 9])
        }
    }

    @Test("out-of-turn calls throw unexpectedMessage without poisoning the handshake")
    func wrongTurn() throws {
        var pair = try NoisePair(.xx)
        #expect(pair.initiator.nextAction == .write)
        #expect(pair.responder.nextAction == .read)
        #expect(throws: NoiseError.unexpectedMessage) { try pair.responder.writeMessage(payload: []) }
        #expect(throws: NoiseError.unexpectedMessage) { try pair.initiator.readMessage([UInt8](repeating: 1, count: 32)) }
        #expect(throws: NoiseError.handshakeIncomplete) { try pair.initiator.split() }

        _ = try pair.complete()
        #expect(pair.initiator.nextAction == .split)
        #expect(throws: NoiseError.unexpectedMessage) { try pair.initiator.writeMessage(payload: []) }
        #expect(throws: NoiseError.unexpectedMessage) { try pair.responder.readMessage([]) }
    }

    @Test("a tampered handshake message fails decryption and poisons the handshake")
    func tamperedHandshake() throws {
        var pair = try NoisePair(.xx)
        _ = try pair.responder.readMessage(try pair.initiator.writeMessage(payload: []))
        var second = try pair.responder.writeMessage(payload: Array("secret".utf8))
        second[40] ^= 0x01  // inside the encrypted static key
        #expect(throws: NoiseError.decryptFailed) { try pair.initiator.readMessage(second) }
        #expect(pair.initiator.nextAction == .failed)
        second[40] ^= 0x01
        #expect(throws: NoiseError.handshakeFailed) { try pair.initiator.readMessage(second) }
        #expect(throws: NoiseError.handshakeFailed) { try pair.initiator.split() }
    }

    @Test("short messages are rejected as truncated")
    func truncated() throws {
        var pair = try NoisePair(.nn)
        #expect(throws: NoiseError.truncated) { try pair.responder.readMessage([UInt8](repeating: 5, count: 31)) }

        var pair2 = try NoisePair(.nn)
        _ = try pair2.responder.readMessage(try pair2.initiator.writeMessage(payload: []))
        let reply = try pair2.responder.writeMessage(payload: [])
        // Ephemeral key present but the tag is cut short.
        #expect(throws: NoiseError.truncated) { try pair2.initiator.readMessage(Array(reply.prefix(40))) }
    }

    @Test("oversized payloads and messages are refused; a write refusal leaves the handshake usable")
    func oversized() throws {
        var pair = try NoisePair(.xx)
        // 32 bytes of ephemeral key + payload; no key yet, so no tag.
        let limit = Noise.maxMessageLength - 32
        #expect(throws: NoiseError.messageTooLarge(size: Noise.maxMessageLength + 1, limit: Noise.maxMessageLength)) {
            try pair.initiator.writeMessage(payload: [UInt8](repeating: 0, count: limit + 1))
        }
        #expect(pair.initiator.nextAction == .write)
        let first = try pair.initiator.writeMessage(payload: [UInt8](repeating: 0, count: limit))
        #expect(first.count == Noise.maxMessageLength)
        _ = try pair.responder.readMessage(first)

        // Responder's reply: e (32) + encrypted s (48) + payload + tag (16).
        let replyLimit = Noise.maxMessageLength - 32 - 48 - 16
        #expect(throws: NoiseError.messageTooLarge(size: Noise.maxMessageLength + 1, limit: Noise.maxMessageLength)) {
            try pair.responder.writeMessage(payload: [UInt8](repeating: 0, count: replyLimit + 1))
        }
        #expect(try pair.responder.writeMessage(payload: [UInt8](repeating: 0, count: replyLimit)).count == Noise.maxMessageLength)

        var reader = try NoisePair(.nn)
        #expect(throws: NoiseError.messageTooLarge(size: Noise.maxMessageLength + 1, limit: Noise.maxMessageLength)) {
            try reader.responder.readMessage([UInt8](repeating: 0, count: Noise.maxMessageLength + 1))
        }
    }

    @Test("a low-order (all-zero) peer key is rejected")
    func lowOrderKey() throws {
        var pair = try NoisePair(.nn)
        _ = try pair.initiator.writeMessage(payload: [])
        // Responder's `e` is the zero point; `ee` would then yield an all-zero secret.
        let forged = [UInt8](repeating: 0, count: 32 + 16)
        #expect(throws: NoiseError.invalidPublicKey) { try pair.initiator.readMessage(forged) }
    }

    @Test("differing prologues make the handshake fail")
    func prologueMismatch() throws {
        var pair = try NoisePair(.nn, initiatorPrologue: [1], responderPrologue: [2])
        _ = try pair.responder.readMessage(try pair.initiator.writeMessage(payload: []))
        let reply = try pair.responder.writeMessage(payload: [])
        #expect(throws: NoiseError.decryptFailed) { try pair.initiator.readMessage(reply) }
    }

    @Test("key configuration mistakes are caught at initialisation")
    func keyConfiguration() throws {
        let keys = NoiseKeyPair.generate()
        #expect(throws: NoiseError.missingKey(.localStatic)) {
            try NoiseHandshake(pattern: .xx, role: .initiator)
        }
        #expect(throws: NoiseError.unexpectedKey(.remoteStatic)) {
            try NoiseHandshake(pattern: .xx, role: .initiator, staticKeyPair: keys, remoteStaticKey: keys.publicKey)
        }
        #expect(throws: NoiseError.unexpectedKey(.localStatic)) {
            try NoiseHandshake(pattern: .nn, role: .responder, staticKeyPair: keys)
        }
        #expect(throws: NoiseError.missingKey(.remoteStatic)) {
            try NoiseHandshake(pattern: .nk, role: .initiator)
        }
        #expect(throws: NoiseError.invalidKeyLength(31)) {
            try NoiseHandshake(pattern: .nk, role: .initiator, remoteStaticKey: [UInt8](repeating: 9, count: 31))
        }
        #expect(throws: NoiseError.invalidKeyLength(33)) { try NoiseKeyPair(privateKey: [UInt8](repeating: 1, count: 33)) }
        // NK's responder uses its static key only through `es`: still required.
        #expect(throws: NoiseError.missingKey(.localStatic)) {
            try NoiseHandshake(pattern: .nk, role: .responder)
        }
    }

    @Test("a key pair rebuilt from its private key has the same public key")
    func keyPairRoundTrip() throws {
        let original = NoiseKeyPair.generate()
        let restored = try NoiseKeyPair(privateKey: original.privateKey)
        #expect(restored.publicKey == original.publicKey)
        #expect(original.publicKey.count == 32)
        #expect(NoiseKeyPair.generate().publicKey != original.publicKey)
    }

    @Test("patterns parse from names and protocol names of this suite only")
    func patternNames() {
        #expect(NoisePattern(name: "XX") == .xx)
        #expect(NoisePattern(name: "IN") == .in)
        #expect(NoisePattern(name: "XXpsk3") == nil)
        #expect(NoisePattern(name: "xx") == nil)
        #expect(NoisePattern(protocolName: "Noise_IK_25519_ChaChaPoly_BLAKE2b") == .ik)
        #expect(NoisePattern(protocolName: "Noise_IK_25519_AESGCM_SHA256") == nil)
        #expect(NoisePattern(protocolName: "Noise__25519_ChaChaPoly_BLAKE2b") == nil)
        #expect(NoisePattern.xx.protocolName == "Noise_XX_25519_ChaChaPoly_BLAKE2b")
        #expect(Set(NoisePattern.all.map(\.name)).count == NoisePattern.all.count)
        #expect(NoisePattern.xx.description == "XX:\n  -> e\n  <- e, ee, s, es\n  -> s, se")
    }
}
