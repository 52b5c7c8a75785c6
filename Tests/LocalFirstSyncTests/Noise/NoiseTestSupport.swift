@testable import LocalFirstSync
@testable import LFSyncCrypto

/// Both ends of a handshake with freshly generated keys, wired the way
/// `pattern` needs them.
struct NoisePair {
    var initiator: NoiseHandshake
    var responder: NoiseHandshake
    let initiatorStatic: NoiseKeyPair
    let responderStatic: NoiseKeyPair

    init(_ pattern: NoisePattern, initiatorPrologue: [UInt8] = [], responderPrologue: [UInt8] = []) throws {
        initiatorStatic = .generate()
        responderStatic = .generate()
        initiator = try NoiseHandshake(
            pattern: pattern, role: .initiator, prologue: initiatorPrologue,
            staticKeyPair: pattern.usesStaticKey(of: .initiator) ? initiatorStatic : nil,
            remoteStaticKey: pattern.responderPreMessage.contains(.s) ? responderStatic.publicKey : nil)
        responder = try NoiseHandshake(
            pattern: pattern, role: .responder, prologue: responderPrologue,
            staticKeyPair: pattern.usesStaticKey(of: .responder) ? responderStatic : nil,
            remoteStaticKey: pattern.initiatorPreMessage.contains(.s) ? initiatorStatic.publicKey : nil)
    }

    /// Runs the handshake to completion with small distinct payloads and
    /// returns both transports.
    mutating func complete() throws -> (initiator: NoiseTransport, responder: NoiseTransport) {
        var index = 0
        while !initiator.isComplete {
            let payload = Array("message \(index)".utf8)
            if initiator.nextAction == .write {
                let received = try responder.readMessage(try initiator.writeMessage(payload: payload))
                guard received == payload else { throw NoisePayloadMismatch(index: index) }
            } else {
                let received = try initiator.readMessage(try responder.writeMessage(payload: payload))
                guard received == payload else { throw NoisePayloadMismatch(index: index) }
            }
            index += 1
        }
        return (try initiator.split(), try responder.split())
    }
}

struct NoisePayloadMismatch: Error {
    let index: Int
}
