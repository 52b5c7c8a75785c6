/// Constants of the Noise suites lfsync speaks: `25519_ChaChaPoly_BLAKE2b`,
/// and `25519_AESGCM_BLAKE2b` between peers whose processors both have AES
/// instructions (Noise Protocol Framework revision 34). The cipher is the only
/// choice; the DH and the hash are fixed.
package enum Noise {
    /// Spec §3: no Noise message, handshake or transport, may exceed 65535 bytes.
    /// Enforced on both write and read so a peer cannot make us allocate or
    /// decrypt more than that per message.
    package static let maxMessageLength = 65535

    /// Everything after the pattern in a ChaChaPoly protocol name (the suite of the
    /// published vectors), e.g. `Noise_XX` + this.
    package static let suiteSuffix = "_25519_ChaChaPoly_BLAKE2b"

    /// `DHLEN` for Curve25519.
    package static let dhLength = 32
    /// `HASHLEN` and `BLOCKLEN` for BLAKE2b.
    package static let hashLength = 64
    package static let blockLength = 128
    /// Cipher key size (both ciphers); HKDF outputs are truncated to this (spec §5.2).
    package static let keyLength = 32
    /// Authentication tag (Poly1305 or GHASH) appended to every ciphertext.
    package static let tagLength = 16
}
