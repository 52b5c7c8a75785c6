/// Everything that can go wrong in a Noise handshake or transport.
///
/// Typed so that connection code can tell a programming mistake
/// (`unexpectedMessage`, `missingKey`) from a hostile or broken peer
/// (`decryptFailed`, `invalidPublicKey`, `truncated`), and close accordingly.
package enum NoiseError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Which key a handshake needed or did not expect.
    package enum Key: Sendable, Equatable {
        case localStatic, remoteStatic, localEphemeral, remoteEphemeral
    }

    /// Authentication failed: the message was tampered with, corrupted, or
    /// encrypted under another key (a different peer or a different transcript).
    case decryptFailed
    /// The 64-bit nonce reached 2^64-1, which the spec reserves; the session
    /// must end (or have rekeyed a new handshake long before).
    case nonceExhausted
    /// A message (or the one a payload would produce) is over `Noise.maxMessageLength`.
    case messageTooLarge(size: Int, limit: Int)
    /// A message ended before a key, tag or ciphertext it must contain.
    case truncated
    /// Wrong turn: writing when the peer should speak, reading when we should,
    /// any message after the handshake finished, or sending in the direction a
    /// one-way pattern forbids.
    case unexpectedMessage
    /// The pattern needs a key that was not supplied (or not yet received).
    case missingKey(Key)
    /// A key was supplied that the pattern never uses; refused because the
    /// caller probably believes it is being checked (e.g. "pinning" a remote
    /// static key in XX, where the peer transmits its own).
    case unexpectedKey(Key)
    /// A key is not 32 bytes.
    case invalidKeyLength(Int)
    /// Diffie-Hellman produced the all-zero output: the peer sent a low-order point.
    case invalidPublicKey
    /// `split()` before the last handshake message was processed.
    case handshakeIncomplete
    /// An earlier error left this handshake in an undefined state; start a new one.
    case handshakeFailed

    package var description: String {
        switch self {
        case .decryptFailed: "Noise decryption failed (tampered data or wrong key)"
        case .nonceExhausted: "Noise nonce exhausted; the session must end"
        case let .messageTooLarge(size, limit): "Noise message of \(size) bytes exceeds the limit of \(limit)"
        case .truncated: "Noise message is truncated"
        case .unexpectedMessage: "Noise message out of turn"
        case let .missingKey(key): "Noise handshake is missing the \(key) key"
        case let .unexpectedKey(key): "Noise pattern does not use a \(key) key, but one was supplied"
        case let .invalidKeyLength(length): "Noise key must be 32 bytes, got \(length)"
        case .invalidPublicKey: "Noise peer sent an invalid (low-order) public key"
        case .handshakeIncomplete: "Noise handshake is not complete"
        case .handshakeFailed: "Noise handshake already failed"
        }
    }
}
