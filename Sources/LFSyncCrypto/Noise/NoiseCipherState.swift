/// One direction of an encrypted channel: a key for the suite's cipher and the
/// nonce counter that must never repeat under it (Noise's `CipherState` with a key).
///
/// A value type so each direction can be owned by its own task (reader and
/// writer) with no locking; copying one and using both copies would reuse
/// nonces, so don't.
package struct NoiseCipherState: Sendable {
    /// The key, set up once in libcrypto for this direction's cipher.
    private var key: AEADKey
    package var cipher: NoiseCipher { key.cipher }
    /// Number of messages processed so far; also the next nonce.
    package private(set) var nonce: UInt64 = 0

    /// Noise `InitializeKey`: a fresh key always starts at nonce 0.
    package init(key: SecureBytes, cipher: NoiseCipher = .chaChaPoly) {
        precondition(key.count == Noise.keyLength, "Noise cipher keys are 32 bytes")
        self.key = AEADKey(cipher: cipher, key: key)
    }

    /// `EncryptWithAd`. Throws `nonceExhausted` rather than ever reusing or
    /// wrapping a nonce: 2^64-1 is reserved by the spec (it is `Rekey`'s nonce).
    package mutating func encrypt(_ plaintext: [UInt8], ad: [UInt8] = []) throws(NoiseError) -> [UInt8] {
        try checkUsable(messageSize: plaintext.count + Noise.tagLength)
        rekeyIfDue()
        let ciphertext = key.seal(counter: nonce, ad: ad, plaintext: plaintext)
        nonce += 1
        return ciphertext
    }

    /// `EncryptWithAd` with empty associated data, from and into caller-owned
    /// memory: writes `plaintext.count + Noise.tagLength` bytes at `output`.
    package mutating func encrypt(_ plaintext: UnsafeRawBufferPointer, into output: UnsafeMutableRawPointer) throws(NoiseError) {
        try checkUsable(messageSize: plaintext.count + Noise.tagLength)
        rekeyIfDue()
        key.seal(counter: nonce, plaintext: plaintext, into: output)
        nonce += 1
    }

    /// `DecryptWithAd` with empty associated data, reading the ciphertext in place.
    package mutating func decrypt(_ ciphertext: UnsafeRawBufferPointer) throws(NoiseError) -> [UInt8] {
        try checkUsable(messageSize: ciphertext.count)
        rekeyIfDue()
        let plaintext = try key.open(counter: nonce, ciphertext: ciphertext)
        nonce += 1
        return plaintext
    }

    /// `DecryptWithAd` with empty associated data, from caller-owned memory into
    /// caller-owned memory: writes `ciphertext.count - Noise.tagLength` bytes at `output`.
    package mutating func decrypt(_ ciphertext: UnsafeRawBufferPointer, into output: UnsafeMutableRawPointer) throws(NoiseError) {
        try checkUsable(messageSize: ciphertext.count)
        rekeyIfDue()
        try key.open(counter: nonce, ciphertext: ciphertext, into: output)
        nonce += 1
    }

    /// `DecryptWithAd`. On failure the nonce does not advance, but the session
    /// should be torn down anyway: Noise gives no way to resynchronise.
    package mutating func decrypt(_ ciphertext: [UInt8], ad: [UInt8] = []) throws(NoiseError) -> [UInt8] {
        try checkUsable(messageSize: ciphertext.count)
        rekeyIfDue()
        let plaintext = try key.open(counter: nonce, ad: ad, ciphertext: ciphertext)
        nonce += 1
        return plaintext
    }

    /// AES-256-GCM messages per key before both sides `rekey()`: at most 64 GiB of
    /// 65535-byte messages under one key, well inside AES-GCM's safe volume (a few
    /// hundred GB per key); a long sync would pass that. Both ends count the same
    /// messages, so they switch keys at the same one (PROTOCOL.md, "Cipher choice").
    /// ChaChaPoly has no such limit and never rekeys.
    package static let aesGCMRekeyInterval: UInt64 = 1 << 20

    /// The nonce at which the last periodic rekey happened: a message that failed and is
    /// retried at the same nonce must not rekey twice.
    private var rekeyedAtNonce: UInt64 = 0

    private mutating func rekeyIfDue() {
        guard cipher == .aesGCM, nonce > 0, nonce % Self.aesGCMRekeyInterval == 0, nonce != rekeyedAtNonce else { return }
        rekey()
        rekeyedAtNonce = nonce
    }

    /// A Noise message is at most 65535 bytes, and the nonce must not run out.
    private func checkUsable(messageSize: Int) throws(NoiseError) {
        guard messageSize <= Noise.maxMessageLength else {
            throw .messageTooLarge(size: messageSize, limit: Noise.maxMessageLength)
        }
        guard nonce < UInt64.max else { throw .nonceExhausted }
    }

    /// Noise `Rekey()`: the new key is the first 32 bytes of encrypting 32 zero
    /// bytes under nonce 2^64-1 with empty associated data. One-way, so a later
    /// key compromise does not expose earlier traffic. The nonce is *not* reset;
    /// both sides must rekey at the same point in the message stream.
    package mutating func rekey() {
        var material = key.seal(counter: UInt64.max, ad: [], plaintext: [UInt8](repeating: 0, count: Noise.keyLength))
        defer { SecureBytes.wipe(&material) }
        key = AEADKey(cipher: cipher, key: SecureBytes(copying: material.prefix(Noise.keyLength)))
    }

    /// Test hook: jump the counter (e.g. to 2^64-2) to exercise exhaustion
    /// without 2^64 encryptions. Not public: setting a nonce backwards reuses it.
    package mutating func setNonceForTesting(_ value: UInt64) {
        nonce = value
    }
}
