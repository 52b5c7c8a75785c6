internal import CSodium

/// An X25519 key pair: the device identity (static key) or a per-handshake
/// ephemeral key.
///
/// The private half lives in wiped-on-release memory; `privateKey` hands out
/// a copy only because the identity must be persisted somewhere.
package struct NoiseKeyPair: Sendable {
    /// 32-byte Curve25519 public key, as sent on the wire.
    package let publicKey: [UInt8]
    package let secret: SecureBytes

    /// Rebuilds a key pair from a stored 32-byte private key; the public key
    /// is derived, so a mismatched pair cannot be constructed.
    package init(privateKey: [UInt8]) throws(NoiseError) {
        guard privateKey.count == Noise.dhLength else { throw .invalidKeyLength(privateKey.count) }
        self.init(secret: SecureBytes(copying: privateKey))
    }

    /// A fresh key pair from libsodium's CSPRNG. X25519 clamps the scalar
    /// itself, so any 32 random bytes are a valid private key.
    package static func generate() -> NoiseKeyPair {
        _ = Sodium.ready
        let secret = SecureBytes(count: Noise.dhLength) { base in
            randombytes_buf(base, Noise.dhLength)
        }
        return NoiseKeyPair(secret: secret)
    }

    package init(secret: SecureBytes) {
        _ = Sodium.ready
        var derived = [UInt8](repeating: 0, count: Noise.dhLength)
        secret.withBytePointer { privatePointer in
            derived.withUnsafeMutableBufferPointer { publicBuffer in
                guard let publicPointer = publicBuffer.baseAddress else { return }
                // Fails only for an all-zero result, impossible for a clamped scalar times the base point.
                _ = crypto_scalarmult_base(publicPointer, privatePointer)
            }
        }
        publicKey = derived
        self.secret = secret
    }

    /// A copy of the 32-byte private key, for persisting the identity. The
    /// caller owns the copy and should not keep it longer than needed.
    package var privateKey: [UInt8] { secret.bytes }

    /// Noise's `DH(key_pair, public_key)`.
    ///
    /// libsodium reports an all-zero shared secret, which is what a low-order
    /// peer point yields; we refuse it so a peer cannot force a known key.
    package func sharedSecret(with peerPublicKey: [UInt8]) throws(NoiseError) -> SecureBytes {
        guard peerPublicKey.count == Noise.dhLength else { throw .invalidKeyLength(peerPublicKey.count) }
        return try SecureBytes(count: Noise.dhLength) { (output) throws(NoiseError) in
            let result = secret.withBytePointer { privatePointer in
                peerPublicKey.withUnsafeBufferPointer { peerBuffer in
                    guard let peerPointer = peerBuffer.baseAddress else { return Int32(-1) }
                    return crypto_scalarmult(output, privatePointer, peerPointer)
                }
            }
            guard result == 0 else { throw .invalidPublicKey }
        }
    }
}
