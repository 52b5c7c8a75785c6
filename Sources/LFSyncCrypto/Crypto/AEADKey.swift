internal import CCrypto
import LFSyncSystem

/// A key set up once in libcrypto for one AEAD cipher, then used for many messages
/// with a new nonce each.
///
/// Why keep it: setting up an AES-256-GCM key (its key schedule and GHASH table)
/// for each 64 KiB transport message cost a tenth of the sealing itself; a
/// direction of a channel keeps one `AEADKey` until its next `Rekey`.
///
/// The libcrypto context is mutated by every call, so it sits behind a lock:
/// a channel direction is used by one task at a time and the lock is never
/// contended, but a copied cipher state used from two tasks stays memory-safe
/// (it would still reuse nonces: `NoiseCipherState` says why not to).
package final class AEADKey: Sendable {
    package let cipher: NoiseCipher
    private let context: LockedState<Context>

    /// libcrypto's cipher context; freed with the key.
    /// Sendable because the lock around it is the only way in.
    private struct Context: ~Copyable, @unchecked Sendable {
        let pointer: OpaquePointer
        deinit { EVP_CIPHER_CTX_free(pointer) }
    }

    package init(cipher: NoiseCipher, key: SecureBytes) {
        precondition(key.count == Noise.keyLength, "AEAD keys are 32 bytes")
        self.cipher = cipher
        guard let pointer = EVP_CIPHER_CTX_new() else { fatalError("libcrypto cannot allocate a cipher context") }
        let algorithm = switch cipher {
        case .aesGCM: LibCrypto.aes256GCM
        case .chaChaPoly: LibCrypto.chaCha20Poly1305
        }
        let keyed = key.withBytePointer { keyPointer in
            EVP_CipherInit_ex2(pointer, algorithm.pointer, keyPointer, nil, -1, nil)
        }
        guard keyed == 1 else { fatalError("libcrypto refused a \(cipher) key: \(LibCrypto.lastError())") }
        context = LockedState(Context(pointer: pointer))
    }

    /// Writes the ciphertext followed by the 16-byte tag, `plaintext.count +
    /// Noise.tagLength` bytes, at `output` (which may be the plaintext's own memory).
    /// Cannot fail for a message within `Noise` limits: the key and nonce sizes are
    /// fixed, and libcrypto's only other refusal is a length beyond 2^31.
    package func seal(
        counter: UInt64, ad: UnsafeRawBufferPointer = .init(start: nil, count: 0),
        plaintext: UnsafeRawBufferPointer, into output: UnsafeMutableRawPointer
    ) {
        precondition(plaintext.count <= Int(Int32.max) && ad.count <= Int(Int32.max))
        let done: Bool = cipher.withNonce(counter) { nonce in
            context.withLock { context -> Bool in
                let ctx = context.pointer
                var written: Int32 = 0
                guard EVP_EncryptInit_ex2(ctx, nil, nil, nonce, nil) == 1 else { return false }
                if let adBase = ad.baseAddress, ad.count > 0 {
                    guard EVP_EncryptUpdate(ctx, nil, &written, adBase.assumingMemoryBound(to: UInt8.self), Int32(ad.count)) == 1 else { return false }
                }
                let out = output.assumingMemoryBound(to: UInt8.self)
                var produced = 0
                if let base = plaintext.baseAddress, plaintext.count > 0 {
                    guard EVP_EncryptUpdate(ctx, out, &written, base.assumingMemoryBound(to: UInt8.self), Int32(plaintext.count)) == 1 else { return false }
                    produced = Int(written)
                }
                guard EVP_EncryptFinal_ex(ctx, out + produced, &written) == 1 else { return false }
                produced += Int(written)
                guard produced == plaintext.count else { return false }
                return EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, Int32(Noise.tagLength), output + produced) == 1
            }
        }
        guard done else { fatalError("libcrypto failed to seal with \(cipher): \(LibCrypto.lastError())") }
    }

    /// Checks the tag, then leaves the plaintext, `ciphertext.count - Noise.tagLength`
    /// bytes, at `output` (which may not overlap the ciphertext). libcrypto decrypts
    /// before it knows the tag is right, so on failure the output is zeroed: nothing
    /// unauthenticated is left where a caller could read it.
    package func open(
        counter: UInt64, ad: UnsafeRawBufferPointer = .init(start: nil, count: 0),
        ciphertext: UnsafeRawBufferPointer, into output: UnsafeMutableRawPointer
    ) throws(NoiseError) {
        guard ciphertext.count >= Noise.tagLength, let sealed = ciphertext.baseAddress else { throw .truncated }
        guard ciphertext.count <= Int(Int32.max), ad.count <= Int(Int32.max) else { throw .decryptFailed }
        let length = ciphertext.count - Noise.tagLength
        let authentic: Bool = cipher.withNonce(counter) { nonce in
            context.withLock { context -> Bool in
                let ctx = context.pointer
                var written: Int32 = 0
                guard EVP_DecryptInit_ex2(ctx, nil, nil, nonce, nil) == 1 else { return false }
                if let adBase = ad.baseAddress, ad.count > 0 {
                    guard EVP_DecryptUpdate(ctx, nil, &written, adBase.assumingMemoryBound(to: UInt8.self), Int32(ad.count)) == 1 else { return false }
                }
                let out = output.assumingMemoryBound(to: UInt8.self)
                var produced = 0
                if length > 0 {
                    guard EVP_DecryptUpdate(ctx, out, &written, sealed.assumingMemoryBound(to: UInt8.self), Int32(length)) == 1 else { return false }
                    produced = Int(written)
                }
                let tag = UnsafeMutableRawPointer(mutating: sealed + length)
                guard EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, Int32(Noise.tagLength), tag) == 1 else { return false }
                guard EVP_DecryptFinal_ex(ctx, out + produced, &written) == 1 else { return false }
                return produced + Int(written) == length
            }
        }
        guard authentic else {
            ERR_clear_error()
            output.initializeMemory(as: UInt8.self, repeating: 0, count: length)
            throw .decryptFailed
        }
    }
}

extension AEADKey {
    /// `seal` into a new array.
    package func seal(counter: UInt64, ad: [UInt8], plaintext: [UInt8]) -> [UInt8] {
        let count = plaintext.count + Noise.tagLength
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            // At least the 16-byte tag: the buffer has storage.
            guard let output = buffer.baseAddress else { preconditionFailure("non-empty buffer without storage") }
            ad.withUnsafeBytes { adBytes in
                plaintext.withUnsafeBytes { plaintextBytes in
                    seal(counter: counter, ad: adBytes, plaintext: plaintextBytes, into: output)
                }
            }
            initialized = count
        }
    }

    /// `open` into a new array.
    package func open(
        counter: UInt64, ad: UnsafeRawBufferPointer = .init(start: nil, count: 0), ciphertext: UnsafeRawBufferPointer
    ) throws(NoiseError) -> [UInt8] {
        guard ciphertext.count >= Noise.tagLength else { throw .truncated }
        let plaintextLength = ciphertext.count - Noise.tagLength
        var failure: NoiseError?
        // One spare byte so the output pointer is never nil, even for an empty payload;
        // no zero-filling: libcrypto writes every byte it reports, and nothing else is kept.
        let output = [UInt8](unsafeUninitializedCapacity: plaintextLength + 1) { buffer, initialized in
            guard let base = buffer.baseAddress else { preconditionFailure("non-empty buffer without storage") }
            do throws(NoiseError) {
                try open(counter: counter, ad: ad, ciphertext: ciphertext, into: base)
                initialized = plaintextLength
            } catch {
                failure = error
                initialized = 0
            }
        }
        if let failure { throw failure }
        return output
    }

    package func open(counter: UInt64, ad: [UInt8], ciphertext: [UInt8]) throws(NoiseError) -> [UInt8] {
        let result: Result<[UInt8], NoiseError> = ad.withUnsafeBytes { adBytes in
            ciphertext.withUnsafeBytes { cipherBytes in
                do throws(NoiseError) {
                    return .success(try open(counter: counter, ad: adBytes, ciphertext: cipherBytes))
                } catch {
                    return .failure(error)
                }
            }
        }
        return try result.get()
    }
}

extension NoiseCipher {
    /// Calls `body` with the 12-byte nonce for `counter`, from the stack: 32 zero bits,
    /// then the 64-bit counter, little-endian for ChaChaPoly (Noise §12.3), big-endian
    /// for AESGCM (§12.4).
    func withNonce<R>(_ counter: UInt64, _ body: (UnsafePointer<UInt8>) -> R) -> R {
        let word = self == .chaChaPoly ? counter.littleEndian : counter.bigEndian
        let nonce: (UInt64, UInt64) = (0, word)
        return withUnsafeBytes(of: nonce) { raw in
            // 16 bytes, the counter in the last 8: the 12 from offset 4 are the nonce.
            body(raw.baseAddress.unsafelyUnwrapped.advanced(by: 4).assumingMemoryBound(to: UInt8.self))
        }
    }
}
