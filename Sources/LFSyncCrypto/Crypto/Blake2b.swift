internal import CSodium

/// Streaming BLAKE2b over libsodium's `crypto_generichash`.
///
/// Non-copyable because it owns libsodium's aligned state: a copy would share
/// the buffer and a double `finalize` would corrupt it.
package struct Blake2b: ~Copyable {
    /// libsodium's state, 64-byte aligned inside `allocation`.
    private let state: UnsafeMutableRawPointer
    /// An ordinary (16-byte aligned) block with room to align the state in it.
    /// Asking the allocator for 64-byte alignment instead splits a block and
    /// frees its edges: hashers made by the hundred thousand (one per received
    /// file, one per chunk check) then leave the heap full of fragments no
    /// later allocation fits — tens of megabytes at 200,000 files.
    private let allocation: UnsafeMutableRawPointer
    private let outputLength: Int
    private let key: [UInt8]
    private static let stateAlignment = 64

    /// - Parameters:
    ///   - outputLength: 32 for content hashes, 64 for Noise's `HASH`.
    ///   - key: optional key (≤ 64 bytes) for keyed hashing.
    public init(outputLength: Int = Hash256.byteCount, key: [UInt8] = []) {
        _ = Sodium.ready
        precondition((16...64).contains(outputLength) && key.count <= 64)
        self.outputLength = outputLength
        self.key = key
        allocation = UnsafeMutableRawPointer.allocate(byteCount: crypto_generichash_statebytes() + Self.stateAlignment, alignment: 16)
        let misalignment = Int(bitPattern: allocation) % Self.stateAlignment
        state = allocation + (misalignment == 0 ? 0 : Self.stateAlignment - misalignment)
        reset()
    }

    private func reset() {
        let result = key.withUnsafeBufferPointer { keyBuffer in
            crypto_generichash_init(
                OpaquePointer(state),
                keyBuffer.baseAddress, keyBuffer.count, outputLength)
        }
        precondition(result == 0, "crypto_generichash_init rejected valid parameters")
    }

    deinit {
        // The state may hold key material (HMAC inner/outer blocks in Noise).
        sodium_memzero(state, crypto_generichash_statebytes())
        allocation.deallocate()
    }

    public mutating func update(_ buffer: UnsafeRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        crypto_generichash_update(
            OpaquePointer(state),
            base.assumingMemoryBound(to: UInt8.self), UInt64(buffer.count))
    }

    /// Becomes a copy of `other`'s state, as if it had been fed the same bytes.
    /// - Precondition: both were made with the same output length and key.
    package mutating func copyState(from other: borrowing Blake2b) {
        precondition(outputLength == other.outputLength && key == other.key)
        state.copyMemory(from: other.state, byteCount: crypto_generichash_statebytes())
    }

    public mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    public consuming func finalize() -> [UInt8] {
        var out = [UInt8](repeating: 0, count: outputLength)
        out.withUnsafeMutableBufferPointer { buffer in
            _ = crypto_generichash_final(
                OpaquePointer(state),
                buffer.baseAddress.unsafelyUnwrapped, outputLength)
        }
        return out
    }

    /// Finalises and starts over with the same parameters, so a hot loop that
    /// hashes many chunks reuses one state instead of allocating per chunk.
    public mutating func finalizeHashAndReset() -> Hash256 {
        precondition(outputLength == Hash256.byteCount)
        var out = [UInt8](repeating: 0, count: outputLength)
        out.withUnsafeMutableBufferPointer { buffer in
            _ = crypto_generichash_final(
                OpaquePointer(state),
                buffer.baseAddress.unsafelyUnwrapped, outputLength)
        }
        reset()
        return Hash256(bytes: out)!
    }

    /// Finalises a 32-byte hasher into a `Hash256`.
    public consuming func finalizeHash() -> Hash256 {
        precondition(outputLength == Hash256.byteCount)
        // The byte count is fixed above, so the initializer cannot fail.
        return Hash256(bytes: finalize())!
    }

    /// One-shot BLAKE2b-256.
    public static func hash(_ buffer: UnsafeRawBufferPointer) -> Hash256 {
        var hasher = Blake2b()
        hasher.update(buffer)
        return hasher.finalizeHash()
    }

    public static func hash(_ bytes: [UInt8]) -> Hash256 {
        bytes.withUnsafeBytes { hash($0) }
    }

    /// One-shot BLAKE2b with any output length, for protocol code (Noise uses 64).
    public static func digest(_ bytes: [UInt8], outputLength: Int, key: [UInt8] = []) -> [UInt8] {
        var hasher = Blake2b(outputLength: outputLength, key: key)
        hasher.update(bytes)
        return hasher.finalize()
    }
}
