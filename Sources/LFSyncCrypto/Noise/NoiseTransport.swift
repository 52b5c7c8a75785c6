/// The result of a completed handshake: one cipher per direction plus what
/// the handshake established about the peer.
///
/// The two directions are separate values so a connection can hand `sender`
/// to its writer task and `receiver` to its reader task. For one-way patterns
/// the forbidden direction is nil.
package struct NoiseTransport: Sendable {
    /// Identical on both sides; usable for channel binding.
    package let handshakeHash: [UInt8]
    /// The peer's authenticated static key (nil for patterns without one, e.g. NN).
    /// Callers must still check it against the expected identity.
    package let remoteStaticKey: [UInt8]?
    package var sender: NoiseCipherState?
    package var receiver: NoiseCipherState?

    package init(handshakeHash: [UInt8], remoteStaticKey: [UInt8]?, sender: NoiseCipherState?, receiver: NoiseCipherState?) {
        self.handshakeHash = handshakeHash
        self.remoteStaticKey = remoteStaticKey
        self.sender = sender
        self.receiver = receiver
    }

    /// Encrypts one transport message to the peer.
    package mutating func encrypt(_ plaintext: [UInt8], ad: [UInt8] = []) throws(NoiseError) -> [UInt8] {
        guard let ciphertext = try sender?.encrypt(plaintext, ad: ad) else { throw .unexpectedMessage }
        return ciphertext
    }

    /// Decrypts one transport message from the peer.
    package mutating func decrypt(_ ciphertext: [UInt8], ad: [UInt8] = []) throws(NoiseError) -> [UInt8] {
        guard let plaintext = try receiver?.decrypt(ciphertext, ad: ad) else { throw .unexpectedMessage }
        return plaintext
    }
}
