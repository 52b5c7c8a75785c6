import Testing
@testable import LocalFirstSync
@testable import LFSyncCrypto

/// Reproduces the published Noise vectors byte for byte: every handshake
/// message, every transport message, and the handshake hash where given.
@Suite("Noise test vectors")
struct NoiseVectorTests {
    @Test("every supported vector reproduces, and all XX vectors are among them")
    func publishedVectors() throws {
        // A missing file throws here and fails the test with its path.
        let file = try NoiseTestVectors.load()
        var checkedPerPattern: [String: Int] = [:]
        var xxVectorCount = 0

        for vector in file.vectors {
            if vector.protocolName == NoisePattern.xx.protocolName { xxVectorCount += 1 }
            guard let pattern = NoisePattern(protocolName: vector.protocolName) else { continue }
            // PSK modifiers are not implemented; plain-pattern vectors carry empty lists.
            guard (vector.initPsks ?? []).isEmpty, (vector.respPsks ?? []).isEmpty else { continue }
            try check(vector, pattern: pattern)
            checkedPerPattern[pattern.name, default: 0] += 1
        }

        #expect(checkedPerPattern.values.reduce(0, +) > 0, "no vector was checked")
        #expect(xxVectorCount > 0, "the vectors file has no XX vector")
        #expect(checkedPerPattern["XX", default: 0] == xxVectorCount, "some XX vectors were skipped")
    }

    private func check(_ vector: NoiseTestVectors.Vector, pattern: NoisePattern) throws {
        let name = vector.protocolName + " (" + (vector.source ?? "?") + ")"
        var initiator = try NoiseHandshake(
            pattern: pattern, role: .initiator,
            prologue: try bytes(vector.initPrologue),
            staticKeyPair: try vector.initStatic.map(keyPair),
            remoteStaticKey: try vector.initRemoteStatic.map(bytes),
            ephemeralKeyPair: try keyPair(vector.initEphemeral))
        var responder = try NoiseHandshake(
            pattern: pattern, role: .responder,
            prologue: try bytes(vector.respPrologue),
            staticKeyPair: try vector.respStatic.map(keyPair),
            remoteStaticKey: try vector.respRemoteStatic.map(bytes),
            ephemeralKeyPair: try vector.respEphemeral.map(keyPair))

        var messages = vector.messages.enumerated().makeIterator()
        // Handshake phase: messages alternate, initiator first.
        while !initiator.isComplete {
            let next = messages.next()
            let (index, message) = try #require(next, "\(name): vector ends mid-handshake")
            let payload = try bytes(message.payload)
            let ciphertext: [UInt8]
            let received: [UInt8]
            if pattern.sender(ofMessage: index) == .initiator {
                ciphertext = try initiator.writeMessage(payload: payload)
                received = try responder.readMessage(ciphertext)
            } else {
                ciphertext = try responder.writeMessage(payload: payload)
                received = try initiator.readMessage(ciphertext)
            }
            #expect(NoiseHex.encode(ciphertext) == message.ciphertext, "\(name): handshake message \(index)")
            #expect(received == payload, "\(name): handshake payload \(index)")
        }
        #expect(responder.isComplete, "\(name): responder did not finish with the initiator")
        if let expected = vector.handshakeHash {
            #expect(NoiseHex.encode(initiator.handshakeHash) == expected, "\(name): initiator handshake hash")
            #expect(NoiseHex.encode(responder.handshakeHash) == expected, "\(name): responder handshake hash")
        }
        if let initiatorStatic = try vector.initStatic.map(keyPair) {
            #expect(responder.remoteStaticKey == initiatorStatic.publicKey, "\(name): responder learned the wrong key")
        }
        if let responderStatic = try vector.respStatic.map(keyPair) {
            #expect(initiator.remoteStaticKey == responderStatic.publicKey, "\(name): initiator learned the wrong key")
        }

        // Transport phase: the alternation continues (one-way: initiator only).
        var initiatorTransport = try initiator.split()
        var responderTransport = try responder.split()
        while let next = messages.next() {
            let (index, message) = next
            let payload = try bytes(message.payload)
            let ciphertext: [UInt8]
            let received: [UInt8]
            if pattern.isOneWay || index % 2 == 0 {
                ciphertext = try initiatorTransport.encrypt(payload)
                received = try responderTransport.decrypt(ciphertext)
            } else {
                ciphertext = try responderTransport.encrypt(payload)
                received = try initiatorTransport.decrypt(ciphertext)
            }
            #expect(NoiseHex.encode(ciphertext) == message.ciphertext, "\(name): transport message \(index)")
            #expect(received == payload, "\(name): transport payload \(index)")
        }
    }

    private func bytes(_ hex: String) throws -> [UInt8] {
        try #require(NoiseHex.decode(hex), "invalid hex in vectors: \(hex)")
    }

    private func keyPair(_ privateHex: String) throws -> NoiseKeyPair {
        try NoiseKeyPair(privateKey: bytes(privateHex))
    }
}
