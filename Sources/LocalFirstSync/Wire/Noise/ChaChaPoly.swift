internal import CSodium

/// Noise's `ENCRYPT`/`DECRYPT` for the ChaChaPoly cipher: ChaCha20-Poly1305
/// (IETF, 96-bit nonce) with the nonce laid out as 32 zero bits followed by
/// the 64-bit counter in little-endian order (spec §12.3).
enum ChaChaPoly {
    static func nonce(_ counter: UInt64) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 12)
        for index in 0..<8 {
            bytes[4 + index] = UInt8(truncatingIfNeeded: counter >> (8 * UInt64(index)))
        }
        return bytes
    }

    /// Returns ciphertext followed by the 16-byte tag. Cannot fail: the key
    /// size is fixed by construction and libsodium's only error is a message
    /// over ~256 GiB, far above `Noise.maxMessageLength`.
    static func encrypt(key: SecureBytes, counter: UInt64, ad: [UInt8], plaintext: [UInt8]) -> [UInt8] {
        _ = Sodium.ready
        let nonceBytes = nonce(counter)
        var output = [UInt8](repeating: 0, count: plaintext.count + Noise.tagLength)
        var outputLength: UInt64 = 0
        output.withUnsafeMutableBufferPointer { out in
            plaintext.withUnsafeBufferPointer { message in
                ad.withUnsafeBufferPointer { adBuffer in
                    nonceBytes.withUnsafeBufferPointer { nonceBuffer in
                        key.withBytePointer { keyPointer in
                            // Both buffers have a positive count, so their base addresses exist.
                            guard let outPointer = out.baseAddress, let noncePointer = nonceBuffer.baseAddress else {
                                preconditionFailure("non-empty buffers without storage")
                            }
                            _ = crypto_aead_chacha20poly1305_ietf_encrypt(
                                outPointer, &outputLength,
                                message.baseAddress, UInt64(message.count),
                                adBuffer.baseAddress, UInt64(adBuffer.count),
                                nil, noncePointer, keyPointer)
                        }
                    }
                }
            }
        }
        return output
    }

    /// `encrypt` from and into caller-owned memory (no associated data):
    /// writes `plaintext.count + Noise.tagLength` bytes at `output`. The
    /// channel's writer encrypts chunk data in place this way, without first
    /// copying it into a message buffer.
    static func encrypt(key: SecureBytes, counter: UInt64, plaintext: UnsafeRawBufferPointer, into output: UnsafeMutableRawPointer) {
        _ = Sodium.ready
        let nonceBytes = nonce(counter)
        var outputLength: UInt64 = 0
        nonceBytes.withUnsafeBufferPointer { nonceBuffer in
            key.withBytePointer { keyPointer in
                guard let noncePointer = nonceBuffer.baseAddress else { preconditionFailure("12-byte nonce without storage") }
                _ = crypto_aead_chacha20poly1305_ietf_encrypt(
                    output.assumingMemoryBound(to: UInt8.self), &outputLength,
                    plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(plaintext.count),
                    nil, 0, nil, noncePointer, keyPointer)
            }
        }
    }

    /// `decrypt` from caller-owned memory (no associated data), into a new array.
    static func decrypt(key: SecureBytes, counter: UInt64, ciphertext: UnsafeRawBufferPointer) throws(NoiseError) -> [UInt8] {
        _ = Sodium.ready
        guard ciphertext.count >= Noise.tagLength, let cipherPointer = ciphertext.baseAddress else { throw .truncated }
        let nonceBytes = nonce(counter)
        let plaintextLength = ciphertext.count - Noise.tagLength
        var result: Int32 = -1
        // One spare byte so the output pointer is never nil, even for an empty payload;
        // no zero-filling: libsodium writes every byte it reports, and nothing else is kept.
        let output = [UInt8](unsafeUninitializedCapacity: plaintextLength + 1) { buffer, initialized in
            var outputLength: UInt64 = 0
            nonceBytes.withUnsafeBufferPointer { nonceBuffer in
                key.withBytePointer { keyPointer in
                    guard let noncePointer = nonceBuffer.baseAddress else { preconditionFailure("12-byte nonce without storage") }
                    result = crypto_aead_chacha20poly1305_ietf_decrypt(
                        buffer.baseAddress, &outputLength, nil,
                        cipherPointer.assumingMemoryBound(to: UInt8.self), UInt64(ciphertext.count),
                        nil, 0, noncePointer, keyPointer)
                }
            }
            initialized = result == 0 ? Int(outputLength) : 0
        }
        guard result == 0, output.count == plaintextLength else { throw .decryptFailed }
        return output
    }

    /// Verifies the tag before releasing any plaintext.
    static func decrypt(key: SecureBytes, counter: UInt64, ad: [UInt8], ciphertext: [UInt8]) throws(NoiseError) -> [UInt8] {
        _ = Sodium.ready
        guard ciphertext.count >= Noise.tagLength else { throw .truncated }
        let nonceBytes = nonce(counter)
        let plaintextLength = ciphertext.count - Noise.tagLength
        // One spare byte so the output pointer is never nil, even for an empty payload.
        var output = [UInt8](repeating: 0, count: plaintextLength + 1)
        var outputLength: UInt64 = 0
        let result = output.withUnsafeMutableBufferPointer { out in
            ciphertext.withUnsafeBufferPointer { cipherBuffer in
                ad.withUnsafeBufferPointer { adBuffer in
                    nonceBytes.withUnsafeBufferPointer { nonceBuffer in
                        key.withBytePointer { keyPointer in
                            // Ciphertext holds at least the tag and the nonce is 12 bytes.
                            guard let cipherPointer = cipherBuffer.baseAddress,
                                  let noncePointer = nonceBuffer.baseAddress
                            else { preconditionFailure("non-empty buffers without storage") }
                            return crypto_aead_chacha20poly1305_ietf_decrypt(
                                out.baseAddress, &outputLength, nil,
                                cipherPointer, UInt64(cipherBuffer.count),
                                adBuffer.baseAddress, UInt64(adBuffer.count),
                                noncePointer, keyPointer)
                        }
                    }
                }
            }
        }
        guard result == 0 else { throw .decryptFailed }
        output.removeLast(output.count - plaintextLength)
        return output
    }
}
