internal import CSodium

/// Noise's `ENCRYPT`/`DECRYPT` for the ChaChaPoly cipher: ChaCha20-Poly1305
/// (IETF, 96-bit nonce) with the nonce laid out as 32 zero bits followed by
/// the 64-bit counter in little-endian order (spec §12.3).
///
/// Each direction has one libsodium call, on caller-owned memory: the channel
/// encrypts chunk data where it lies and decrypts straight out of its receive
/// buffer. The array forms (handshake, tests) go through the same calls.
enum ChaChaPoly {
    static func nonce(_ counter: UInt64) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 12)
        for index in 0..<8 {
            bytes[4 + index] = UInt8(truncatingIfNeeded: counter >> (8 * UInt64(index)))
        }
        return bytes
    }

    /// Writes ciphertext followed by the 16-byte tag, `plaintext.count +
    /// Noise.tagLength` bytes, at `output`. Cannot fail: the key size is fixed
    /// by construction and libsodium's only error is a message over ~256 GiB,
    /// far above `Noise.maxMessageLength`.
    static func encrypt(
        key: SecureBytes, counter: UInt64, ad: UnsafeRawBufferPointer = .init(start: nil, count: 0),
        plaintext: UnsafeRawBufferPointer, into output: UnsafeMutableRawPointer
    ) {
        _ = Sodium.ready
        let nonceBytes = nonce(counter)
        var outputLength: UInt64 = 0
        nonceBytes.withUnsafeBufferPointer { nonceBuffer in
            key.withBytePointer { keyPointer in
                guard let noncePointer = nonceBuffer.baseAddress else { preconditionFailure("12-byte nonce without storage") }
                _ = crypto_aead_chacha20poly1305_ietf_encrypt(
                    output.assumingMemoryBound(to: UInt8.self), &outputLength,
                    plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(plaintext.count),
                    ad.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(ad.count),
                    nil, noncePointer, keyPointer)
            }
        }
    }

    static func encrypt(key: SecureBytes, counter: UInt64, ad: [UInt8], plaintext: [UInt8]) -> [UInt8] {
        let count = plaintext.count + Noise.tagLength
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            // At least the 16-byte tag: the buffer has storage.
            guard let output = buffer.baseAddress else { preconditionFailure("non-empty buffer without storage") }
            ad.withUnsafeBytes { adBytes in
                plaintext.withUnsafeBytes { plaintextBytes in
                    encrypt(key: key, counter: counter, ad: adBytes, plaintext: plaintextBytes, into: output)
                }
            }
            initialized = count
        }
    }

    /// Verifies the tag, then writes the plaintext, `ciphertext.count -
    /// Noise.tagLength` bytes, at `output` (which may not overlap the
    /// ciphertext). On failure nothing usable is written.
    static func decrypt(
        key: SecureBytes, counter: UInt64, ad: UnsafeRawBufferPointer = .init(start: nil, count: 0),
        ciphertext: UnsafeRawBufferPointer, into output: UnsafeMutableRawPointer
    ) throws(NoiseError) {
        _ = Sodium.ready
        guard ciphertext.count >= Noise.tagLength, let cipherPointer = ciphertext.baseAddress else { throw .truncated }
        let nonceBytes = nonce(counter)
        var outputLength: UInt64 = 0
        var result: Int32 = -1
        nonceBytes.withUnsafeBufferPointer { nonceBuffer in
            key.withBytePointer { keyPointer in
                guard let noncePointer = nonceBuffer.baseAddress else { preconditionFailure("12-byte nonce without storage") }
                result = crypto_aead_chacha20poly1305_ietf_decrypt(
                    output.assumingMemoryBound(to: UInt8.self), &outputLength, nil,
                    cipherPointer.assumingMemoryBound(to: UInt8.self), UInt64(ciphertext.count),
                    ad.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(ad.count),
                    noncePointer, keyPointer)
            }
        }
        guard result == 0, outputLength == UInt64(ciphertext.count - Noise.tagLength) else { throw .decryptFailed }
    }

    /// `decrypt(...into:)` into a new array.
    static func decrypt(
        key: SecureBytes, counter: UInt64, ad: UnsafeRawBufferPointer = .init(start: nil, count: 0),
        ciphertext: UnsafeRawBufferPointer
    ) throws(NoiseError) -> [UInt8] {
        guard ciphertext.count >= Noise.tagLength else { throw .truncated }
        let plaintextLength = ciphertext.count - Noise.tagLength
        var failure: NoiseError?
        // One spare byte so the output pointer is never nil, even for an empty payload;
        // no zero-filling: libsodium writes every byte it reports, and nothing else is kept.
        let output = [UInt8](unsafeUninitializedCapacity: plaintextLength + 1) { buffer, initialized in
            guard let base = buffer.baseAddress else { preconditionFailure("non-empty buffer without storage") }
            do throws(NoiseError) {
                try decrypt(key: key, counter: counter, ad: ad, ciphertext: ciphertext, into: base)
                initialized = plaintextLength
            } catch {
                failure = error
                initialized = 0
            }
        }
        if let failure { throw failure }
        return output
    }

    static func decrypt(key: SecureBytes, counter: UInt64, ad: [UInt8], ciphertext: [UInt8]) throws(NoiseError) -> [UInt8] {
        let result: Result<[UInt8], NoiseError> = ad.withUnsafeBytes { adBytes in
            ciphertext.withUnsafeBytes { cipherBytes in
                do throws(NoiseError) {
                    return .success(try decrypt(key: key, counter: counter, ad: adBytes, ciphertext: cipherBytes))
                } catch {
                    return .failure(error)
                }
            }
        }
        return try result.get()
    }
}
