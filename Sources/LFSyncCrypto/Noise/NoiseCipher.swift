internal import CSodium

/// The cipher of a Noise suite (`ENCRYPT`/`DECRYPT`, spec §12): ChaChaPoly,
/// which every lfsync peer speaks and the published vectors cover, or AESGCM
/// (AES-256-GCM), about a quarter faster where the processor has AES
/// instructions. A connection uses AESGCM only when both peers can (see
/// PROTOCOL.md, "Cipher choice").
///
/// Each direction is one libsodium call, on caller-owned memory: the channel
/// encrypts chunk data where it lies and decrypts straight out of its receive
/// buffer. The array forms (handshake, tests) go through the same calls.
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

    /// libsodium's AES-256-GCM exists only for processors with AES-NI and CLMUL.
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
        var bytes = [UInt8](repeating: 0, count: 12)
        for index in 0..<8 {
            let byte = UInt8(truncatingIfNeeded: counter >> (8 * UInt64(index)))
            bytes[self == .chaChaPoly ? 4 + index : 11 - index] = byte
        }
        return bytes
    }

    /// Writes ciphertext followed by the 16-byte tag, `plaintext.count +
    /// Noise.tagLength` bytes, at `output`. Cannot fail: the key size is fixed
    /// by construction and libsodium's only error is a message far above
    /// `Noise.maxMessageLength`.
    package func encrypt(
        key: SecureBytes, counter: UInt64, ad: UnsafeRawBufferPointer = .init(start: nil, count: 0),
        plaintext: UnsafeRawBufferPointer, into output: UnsafeMutableRawPointer
    ) {
        _ = Sodium.ready
        precondition(isAvailable, "\(name) is not available on this processor")
        var outputLength: UInt64 = 0
        let out = output.assumingMemoryBound(to: UInt8.self)
        let message = plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self)
        let data = ad.baseAddress?.assumingMemoryBound(to: UInt8.self)
        withNonce(counter, key: key) { noncePointer, keyPointer in
            _ = switch self {
            case .chaChaPoly:
                crypto_aead_chacha20poly1305_ietf_encrypt(
                    out, &outputLength, message, UInt64(plaintext.count), data, UInt64(ad.count), nil, noncePointer, keyPointer)
            case .aesGCM:
                crypto_aead_aes256gcm_encrypt(
                    out, &outputLength, message, UInt64(plaintext.count), data, UInt64(ad.count), nil, noncePointer, keyPointer)
            }
        }
    }

    /// Calls `body` with the nonce for `counter` and the key, as libsodium takes them.
    private func withNonce(
        _ counter: UInt64, key: SecureBytes, _ body: (UnsafePointer<UInt8>, UnsafePointer<UInt8>) -> Void
    ) {
        let nonceBytes = nonce(counter)
        nonceBytes.withUnsafeBufferPointer { nonceBuffer in
            key.withBytePointer { keyPointer in
                guard let noncePointer = nonceBuffer.baseAddress else { preconditionFailure("12-byte nonce without storage") }
                body(noncePointer, keyPointer)
            }
        }
    }

    /// Verifies the tag, then writes the plaintext, `ciphertext.count -
    /// Noise.tagLength` bytes, at `output` (which may not overlap the
    /// ciphertext). On failure nothing usable is written.
    package func decrypt(
        key: SecureBytes, counter: UInt64, ad: UnsafeRawBufferPointer = .init(start: nil, count: 0),
        ciphertext: UnsafeRawBufferPointer, into output: UnsafeMutableRawPointer
    ) throws(NoiseError) {
        _ = Sodium.ready
        guard isAvailable else { throw .decryptFailed }
        guard ciphertext.count >= Noise.tagLength, let cipherPointer = ciphertext.baseAddress else { throw .truncated }
        var outputLength: UInt64 = 0
        var result: Int32 = -1
        let out = output.assumingMemoryBound(to: UInt8.self)
        let sealed = cipherPointer.assumingMemoryBound(to: UInt8.self)
        let data = ad.baseAddress?.assumingMemoryBound(to: UInt8.self)
        withNonce(counter, key: key) { noncePointer, keyPointer in
            result = switch self {
            case .chaChaPoly:
                crypto_aead_chacha20poly1305_ietf_decrypt(
                    out, &outputLength, nil, sealed, UInt64(ciphertext.count), data, UInt64(ad.count), noncePointer, keyPointer)
            case .aesGCM:
                crypto_aead_aes256gcm_decrypt(
                    out, &outputLength, nil, sealed, UInt64(ciphertext.count), data, UInt64(ad.count), noncePointer, keyPointer)
            }
        }
        guard result == 0, outputLength == UInt64(ciphertext.count - Noise.tagLength) else { throw .decryptFailed }
    }

    package func encrypt(key: SecureBytes, counter: UInt64, ad: [UInt8], plaintext: [UInt8]) -> [UInt8] {
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

    /// `decrypt(...into:)` into a new array.
    package func decrypt(
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

    package func decrypt(key: SecureBytes, counter: UInt64, ad: [UInt8], ciphertext: [UInt8]) throws(NoiseError) -> [UInt8] {
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
