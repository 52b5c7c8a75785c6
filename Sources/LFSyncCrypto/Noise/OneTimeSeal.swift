internal import CSodium

/// Bytes sealed once under a fresh random key that seals nothing else, so the
/// same ciphertext can go to several peers: each learns the key inside its own
/// Noise channel (PROTOCOL.md, "Shared segments").
///
/// Why: a broadcast sends every chunk to several devices, and one secure
/// channel per device meant one encryption per device — most of a broadcasting
/// sender's CPU. Sealed once, a chunk costs one encryption however many peers
/// take it. A key is used for exactly one message, so its nonce is always 0.
package struct OneTimeSeal: Hashable, Sendable {
    package let cipher: NoiseCipher
    package let key: SecureBytes
    /// Ciphertext followed by the 16-byte tag.
    package let sealed: [UInt8]

    /// Plaintext bytes the seal holds.
    package var plaintextCount: Int { sealed.count - Noise.tagLength }

    package init(cipher: NoiseCipher, key: SecureBytes, sealed: [UInt8]) {
        precondition(key.count == Noise.keyLength && sealed.count >= Noise.tagLength)
        self.cipher = cipher
        self.key = key
        self.sealed = sealed
    }

    /// Seals `plaintext` under a new random key.
    package static func seal(_ plaintext: ArraySlice<UInt8>, cipher: NoiseCipher) -> OneTimeSeal {
        _ = Sodium.ready
        let key = SecureBytes(count: Noise.keyLength) { base in randombytes_buf(base, Noise.keyLength) }
        let count = plaintext.count + Noise.tagLength
        let sealed = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            // At least the 16-byte tag: the buffer has storage.
            guard let output = buffer.baseAddress else { preconditionFailure("non-empty buffer without storage") }
            plaintext.withUnsafeBytes { bytes in cipher.encrypt(key: key, counter: 0, plaintext: bytes, into: output) }
            initialized = count
        }
        return OneTimeSeal(cipher: cipher, key: key, sealed: sealed)
    }

    /// Checks the tag and writes `sealed.count - Noise.tagLength` plaintext bytes at `output`.
    package static func open(
        _ sealed: UnsafeRawBufferPointer, key: SecureBytes, cipher: NoiseCipher, into output: UnsafeMutableRawPointer
    ) throws(NoiseError) {
        guard key.count == Noise.keyLength else { throw .decryptFailed }
        try cipher.decrypt(key: key, counter: 0, ciphertext: sealed, into: output)
    }

    /// `open(_:key:cipher:into:)` into a new array.
    package static func open(_ sealed: UnsafeRawBufferPointer, key: SecureBytes, cipher: NoiseCipher) throws(NoiseError) -> [UInt8] {
        guard key.count == Noise.keyLength else { throw .decryptFailed }
        return try cipher.decrypt(key: key, counter: 0, ciphertext: sealed)
    }

    /// Two seals are the same when they seal to the same bytes with the same
    /// cipher (the key is not compared: it is secret, and the tag depends on it).
    package static func == (lhs: OneTimeSeal, rhs: OneTimeSeal) -> Bool {
        lhs.cipher == rhs.cipher && lhs.sealed == rhs.sealed
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(cipher)
        hasher.combine(sealed.count)
    }
}
