internal import CZstd

/// A reusable zstd compression context for Chunk payloads.
///
/// Reusing one context per sending task avoids re-allocating zstd's tables
/// for every chunk. Non-copyable because it owns the C context; not Sendable
/// because a zstd context must not be used by two threads at once — create
/// one per task.
package struct ZstdCompressor: ~Copyable {
    /// zstd level 1: the fastest standard level. Chunks must keep pace with
    /// the network and ChaCha20 on two cores, and on photo libraries the
    /// ratio of higher levels is spent on the few compressible files.
    package static let defaultLevel: Int32 = 1

    private let context: OpaquePointer
    package let level: Int32

    package init(level: Int32 = ZstdCompressor.defaultLevel) {
        guard let context = ZSTD_createCCtx() else { fatalError("zstd: out of memory creating a compression context") }
        self.context = context
        self.level = level
    }

    deinit {
        ZSTD_freeCCtx(context)
    }

    /// Compresses `input` into one zstd frame (with its content size recorded),
    /// or returns nil when the result would be longer than `maxOutputLength` —
    /// zstd stops as soon as the output does not fit, so "not worth it" is
    /// found out cheaply and without allocating a worst-case buffer.
    package func compress(_ input: [UInt8], maxOutputLength: Int) -> [UInt8]? {
        guard maxOutputLength > 0 else { return nil }
        var failed = false
        let output = [UInt8](unsafeUninitializedCapacity: maxOutputLength) { buffer, count in
            let result = input.withUnsafeBytes { source in
                ZSTD_compressCCtx(context, buffer.baseAddress, buffer.count, source.baseAddress, source.count, level)
            }
            if ZSTD_isError(result) != 0 {
                failed = true
                count = 0
            } else {
                count = result
            }
        }
        guard !failed else { return nil }
        // The buffer was sized for the worst useful case; don't let a well
        // compressed chunk carry that slack around while it waits to be sent.
        return output.count * 2 < maxOutputLength ? Array(output[...]) : output
    }
}
