#if canImport(Glibc)
import Glibc
#endif
internal import CCrypto
internal import CSodium

/// Keyed BLAKE2b with a 32-byte output: the hash of every chunk, file and asset
/// (PROTOCOL.md, "Hashes"). Keyed BLAKE2b is standard BLAKE2b (RFC 7693) with the
/// key as its first block; a different key per use keeps a chunk's hash from ever
/// being taken for a file's.
///
/// Two libraries compute exactly the same bytes — libsodium's `crypto_generichash`
/// and libcrypto's `BLAKE2BMAC` — and neither is the faster everywhere: on the Intel
/// Xeon lfsync is benchmarked on, libsodium's runs at 0.77 GB/s and libcrypto's at
/// 0.70; on AMD EPYC libcrypto's was measured at 1.3–1.4 GB/s against libsodium's
/// 0.73. `Blake2bImplementation.fastest` times both once per process and every
/// hasher uses the winner.
///
/// Non-copyable: it owns the library's state, which a copy would share.
package struct KeyedBlake2b: ~Copyable {
    package static let outputLength = 32

    private let implementation: Blake2bImplementation
    private let state: State

    private enum State {
        /// libsodium's state, 64-byte aligned inside `allocation` (see `Blake2b`).
        case libsodium(state: UnsafeMutableRawPointer, allocation: UnsafeMutableRawPointer)
        case libcrypto(context: OpaquePointer)
    }

    private let key: [UInt8]

    /// - Parameter key: 1 to 64 bytes.
    package init(key: [UInt8], implementation: Blake2bImplementation = .fastest) {
        precondition((1...64).contains(key.count), "a BLAKE2b key is 1 to 64 bytes")
        self.key = key
        self.implementation = implementation
        switch implementation {
        case .libsodium:
            _ = Sodium.ready
            let alignment = 64
            let allocation = UnsafeMutableRawPointer.allocate(byteCount: crypto_generichash_statebytes() + alignment, alignment: 16)
            let misalignment = Int(bitPattern: allocation) % alignment
            state = .libsodium(state: allocation + (misalignment == 0 ? 0 : alignment - misalignment), allocation: allocation)
        case .libcrypto:
            guard let context = EVP_MAC_CTX_new(LibCrypto.blake2bMAC.pointer) else {
                fatalError("libcrypto cannot allocate a MAC context: \(LibCrypto.lastError())")
            }
            state = .libcrypto(context: context)
        }
        start(withKey: true)
    }

    deinit {
        switch state {
        case let .libsodium(state, allocation):
            sodium_memzero(state, crypto_generichash_statebytes())
            allocation.deallocate()
        case let .libcrypto(context):
            EVP_MAC_CTX_free(context)
        }
    }

    /// Begins a new hash under the key. libcrypto keeps the key it was given and
    /// starts over from it when handed none, so only the first start passes it.
    private func start(withKey: Bool) {
        let ok: Bool
        switch state {
        case let .libsodium(state, _):
            ok = key.withUnsafeBufferPointer { keyBuffer in
                crypto_generichash_init(OpaquePointer(state), keyBuffer.baseAddress, keyBuffer.count, Self.outputLength) == 0
            }
        case let .libcrypto(context):
            var size = Self.outputLength
            ok = withUnsafeMutablePointer(to: &size) { sizePointer in
                var parameters = [OSSL_PARAM_construct_size_t(OSSL_MAC_PARAM_SIZE, sizePointer), OSSL_PARAM_construct_end()]
                guard withKey else { return EVP_MAC_init(context, nil, 0, &parameters) == 1 }
                return key.withUnsafeBufferPointer { keyBuffer in
                    EVP_MAC_init(context, keyBuffer.baseAddress, keyBuffer.count, &parameters) == 1
                }
            }
        }
        guard ok else { fatalError("\(implementation) refused a BLAKE2b key of \(key.count) bytes: \(LibCrypto.lastError())") }
    }

    package mutating func update(_ buffer: UnsafeRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        switch state {
        case let .libsodium(state, _):
            crypto_generichash_update(OpaquePointer(state), base.assumingMemoryBound(to: UInt8.self), UInt64(buffer.count))
        case let .libcrypto(context):
            guard EVP_MAC_update(context, base.assumingMemoryBound(to: UInt8.self), buffer.count) == 1 else {
                fatalError("libcrypto failed a BLAKE2b update: \(LibCrypto.lastError())")
            }
        }
    }

    package mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// The hash of everything fed since the last reset, and a fresh start under the
    /// same key: a loop hashing many chunks keeps one state.
    package mutating func finalizeAndReset() -> Hash256 {
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        let ok = withUnsafeMutableBytes(of: &words) { output -> Bool in
            let out = output.baseAddress.unsafelyUnwrapped.assumingMemoryBound(to: UInt8.self)
            switch state {
            case let .libsodium(state, _):
                return crypto_generichash_final(OpaquePointer(state), out, Self.outputLength) == 0
            case let .libcrypto(context):
                var written = 0
                return EVP_MAC_final(context, out, &written, Self.outputLength) == 1 && written == Self.outputLength
            }
        }
        guard ok else { fatalError("\(implementation) failed to finish a BLAKE2b hash: \(LibCrypto.lastError())") }
        start(withKey: false)
        return withUnsafeBytes(of: words) { Hash256(bytes: $0).unsafelyUnwrapped }
    }

    /// One hash of `buffer` under `key`.
    package static func hash(_ buffer: UnsafeRawBufferPointer, key: [UInt8], implementation: Blake2bImplementation = .fastest) -> Hash256 {
        if implementation == .libsodium {
            // libsodium's one-shot call needs no state of its own.
            _ = Sodium.ready
            var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
            let result = withUnsafeMutableBytes(of: &words) { output in
                key.withUnsafeBufferPointer { keyBuffer in
                    crypto_generichash(
                        output.baseAddress.unsafelyUnwrapped.assumingMemoryBound(to: UInt8.self), outputLength,
                        buffer.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(buffer.count),
                        keyBuffer.baseAddress, keyBuffer.count)
                }
            }
            precondition(result == 0, "crypto_generichash rejected valid parameters")
            return withUnsafeBytes(of: words) { Hash256(bytes: $0).unsafelyUnwrapped }
        }
        var hasher = KeyedBlake2b(key: key, implementation: implementation)
        hasher.update(buffer)
        return hasher.finalizeAndReset()
    }

    package static func hash(_ bytes: [UInt8], key: [UInt8], implementation: Blake2bImplementation = .fastest) -> Hash256 {
        bytes.withUnsafeBytes { hash($0, key: key, implementation: implementation) }
    }
}
