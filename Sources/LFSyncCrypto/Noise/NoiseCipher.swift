internal import CSodium

/// The cipher of a Noise suite (`ENCRYPT`/`DECRYPT`, spec §12): ChaChaPoly,
/// which every lfsync peer speaks and the published vectors cover, or AESGCM
/// (AES-256-GCM), about a quarter faster where the processor has AES
/// instructions. A connection uses AESGCM only when both peers can (see
/// PROTOCOL.md, "Cipher choice").
///
/// Both run on OpenSSL's libcrypto (`AEADKey`), two to two and a half times as fast
/// as libsodium's here; each direction is one call on caller-owned memory: the
/// channel encrypts chunk data where it lies and decrypts straight out of its
/// receive buffer. The array forms (handshake, tests) go through the same calls.
package enum NoiseCipher: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    case chaChaPoly = 1
    case aesGCM = 2

    /// The name in a Noise protocol name, e.g. `Noise_XX_25519_AESGCM_BLAKE2b`.
    package var name: String {
        switch self {
        case .chaChaPoly: "ChaChaPoly"
        case .aesGCM: "AESGCM"
        }
    }

    package var description: String { name }

    /// AESGCM is offered only where the processor has AES-NI and CLMUL (asked of
    /// libsodium, which keys its own AES-GCM on the same test): elsewhere libcrypto
    /// would run it in software, slower than ChaChaPoly.
    package var isAvailable: Bool { self == .chaChaPoly || Self.processorHasAES }

    /// Asked once: every sealed and opened message checks it.
    private static let processorHasAES: Bool = {
        _ = Sodium.ready
        return crypto_aead_aes256gcm_is_available() == 1
    }()

    /// What this machine can use, fastest first.
    package static var usable: [NoiseCipher] { [.aesGCM, .chaChaPoly].filter(\.isAvailable) }

    /// 32 zero bits, then the 64-bit counter: little-endian for ChaChaPoly
    /// (spec §12.3), big-endian for AESGCM (§12.4).
    package func nonce(_ counter: UInt64) -> [UInt8] {
        withNonce(counter) { Array(UnsafeBufferPointer(start: $0, count: 12)) }
    }

    /// Writes ciphertext followed by the 16-byte tag, `plaintext.count +
    /// Noise.tagLength` bytes, at `output`, under a key set up for this one call
    /// (the handshake, `Rekey`, tests). A channel keeps its key set up instead:
    /// `NoiseCipherState` holds an `AEADKey`.
    package func encrypt(
        key: SecureBytes, counter: UInt64, ad: UnsafeRawBufferPointer = .init(start: nil, count: 0),
        plaintext: UnsafeRawBufferPointer, into output: UnsafeMutableRawPointer
    ) {
        AEADKey(cipher: self, key: key).seal(counter: counter, ad: ad, plaintext: plaintext, into: output)
    }

    /// Verifies the tag, then writes the plaintext, `ciphertext.count -
    /// Noise.tagLength` bytes, at `output` (which may not overlap the
    /// ciphertext). On failure nothing usable is written.
    package func decrypt(
        key: SecureBytes, counter: UInt64, ad: UnsafeRawBufferPointer = .init(start: nil, count: 0),
        ciphertext: UnsafeRawBufferPointer, into output: UnsafeMutableRawPointer
    ) throws(NoiseError) {
        try AEADKey(cipher: self, key: key).open(counter: counter, ad: ad, ciphertext: ciphertext, into: output)
    }

    package func encrypt(key: SecureBytes, counter: UInt64, ad: [UInt8], plaintext: [UInt8]) -> [UInt8] {
        AEADKey(cipher: self, key: key).seal(counter: counter, ad: ad, plaintext: plaintext)
    }

    /// `decrypt(...into:)` into a new array.
    package func decrypt(
        key: SecureBytes, counter: UInt64, ad: UnsafeRawBufferPointer = .init(start: nil, count: 0),
        ciphertext: UnsafeRawBufferPointer
    ) throws(NoiseError) -> [UInt8] {
        try AEADKey(cipher: self, key: key).open(counter: counter, ad: ad, ciphertext: ciphertext)
    }

    package func decrypt(key: SecureBytes, counter: UInt64, ad: [UInt8], ciphertext: [UInt8]) throws(NoiseError) -> [UInt8] {
        try AEADKey(cipher: self, key: key).open(counter: counter, ad: ad, ciphertext: ciphertext)
    }
}
