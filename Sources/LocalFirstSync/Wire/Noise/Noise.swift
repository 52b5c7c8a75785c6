/// Constants of the one Noise suite lfsync speaks: `25519_ChaChaPoly_BLAKE2b`
/// (Noise Protocol Framework revision 34).
///
/// Only one suite is implemented on purpose: every peer runs the same code, so
/// negotiation would add attack surface and buy nothing.
public enum Noise {
    /// Spec §3: no Noise message, handshake or transport, may exceed 65535 bytes.
    /// Enforced on both write and read so a peer cannot make us allocate or
    /// decrypt more than that per message.
    public static let maxMessageLength = 65535

    /// Everything after the pattern in a protocol name, e.g. `Noise_XX` + this.
    public static let suiteSuffix = "_25519_ChaChaPoly_BLAKE2b"

    /// `DHLEN` for Curve25519.
    static let dhLength = 32
    /// `HASHLEN` and `BLOCKLEN` for BLAKE2b.
    static let hashLength = 64
    static let blockLength = 128
    /// ChaChaPoly key size; HKDF outputs are truncated to this (spec §5.2).
    static let keyLength = 32
    /// Poly1305 authentication tag appended to every ciphertext.
    static let tagLength = 16
}
