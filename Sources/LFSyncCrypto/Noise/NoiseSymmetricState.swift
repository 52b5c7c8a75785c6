/// Noise's `SymmetricState` (spec §5.2): the chaining key `ck`, the running
/// transcript hash `h`, and the handshake cipher (nil until the first `MixKey`,
/// during which `EncryptAndHash` passes data through in the clear, as the
/// spec's empty-key `CipherState` does).
struct NoiseSymmetricState: Sendable {
    private var chainingKey: SecureBytes
    private(set) var handshakeHash: [UInt8]
    private var cipher: NoiseCipherState?
    /// The suite's cipher, for every key this state derives.
    package let cipherKind: NoiseCipher

    /// `InitializeSymmetric`: names of at most HASHLEN bytes are zero-padded,
    /// longer ones hashed; `ck` starts equal to `h`.
    package init(protocolName: String, cipher: NoiseCipher = .chaChaPoly) {
        cipherKind = cipher
        let name = Array(protocolName.utf8)
        if name.count <= Noise.hashLength {
            handshakeHash = name + [UInt8](repeating: 0, count: Noise.hashLength - name.count)
        } else {
            handshakeHash = NoiseHash.hash(name)
        }
        chainingKey = SecureBytes(copying: handshakeHash)
        self.cipher = nil
    }

    package var hasKey: Bool { cipher != nil }

    /// `MixKey`: fold a DH result into `ck` and derive a new handshake key.
    package mutating func mixKey(_ inputKeyMaterial: SecureBytes) {
        let (newChainingKey, tempKey) = inputKeyMaterial.withUnsafeBytes {
            NoiseHash.hkdf2(chainingKey: chainingKey, inputKeyMaterial: $0)
        }
        chainingKey = newChainingKey
        cipher = NoiseCipherState(key: tempKey.prefix(Noise.keyLength), cipher: cipherKind)
    }

    /// `MixHash`: h = HASH(h || data), binding everything sent to the transcript.
    package mutating func mixHash(_ data: [UInt8]) {
        handshakeHash = NoiseHash.hash(handshakeHash, data)
    }

    /// `MixKeyAndHash`, used by the `psk` token. No built-in pattern uses a
    /// PSK today; it is here so adding `psk` modifiers is a pattern-table change.
    package mutating func mixKeyAndHash(_ inputKeyMaterial: SecureBytes) {
        let (newChainingKey, tempHash, tempKey) = inputKeyMaterial.withUnsafeBytes {
            NoiseHash.hkdf3(chainingKey: chainingKey, inputKeyMaterial: $0)
        }
        chainingKey = newChainingKey
        mixHash(tempHash.bytes)
        cipher = NoiseCipherState(key: tempKey.prefix(Noise.keyLength), cipher: cipherKind)
    }

    /// `EncryptAndHash`: the transcript hash is the associated data, so any
    /// divergence in what the two sides saw makes the next decryption fail.
    package mutating func encryptAndHash(_ plaintext: [UInt8]) throws(NoiseError) -> [UInt8] {
        var ciphertext = plaintext
        if var keyed = cipher {
            ciphertext = try keyed.encrypt(plaintext, ad: handshakeHash)
            cipher = keyed
        }
        mixHash(ciphertext)
        return ciphertext
    }

    /// `DecryptAndHash`.
    package mutating func decryptAndHash(_ ciphertext: [UInt8]) throws(NoiseError) -> [UInt8] {
        var plaintext = ciphertext
        if var keyed = cipher {
            plaintext = try keyed.decrypt(ciphertext, ad: handshakeHash)
            cipher = keyed
        }
        mixHash(ciphertext)
        return plaintext
    }

    /// `Split`: two transport keys from `ck`, initiator→responder first.
    package func split() -> (NoiseCipherState, NoiseCipherState) {
        let (first, second) = NoiseHash.hkdf2(
            chainingKey: chainingKey, inputKeyMaterial: UnsafeRawBufferPointer(start: nil, count: 0))
        return (
            NoiseCipherState(key: first.prefix(Noise.keyLength), cipher: cipherKind),
            NoiseCipherState(key: second.prefix(Noise.keyLength), cipher: cipherKind)
        )
    }
}
