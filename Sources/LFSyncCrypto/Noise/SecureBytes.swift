internal import CSodium

/// A fixed-size buffer for secret keys that is wiped when the last reference goes.
///
/// Swift arrays are copy-on-write and may leave stale copies anywhere on the
/// heap, so secrets live here instead: one allocation, written only while it is
/// initialised, zeroed with `sodium_memzero` (which the optimiser may not
/// elide) on deinit. Immutability after `init` is what makes sharing it
/// between copies of a value type — and across concurrency domains — safe;
/// "changing" a key means making a new `SecureBytes`.
package final class SecureBytes: @unchecked Sendable {
    private let storage: UnsafeMutableRawBufferPointer

    /// Allocates `count` (> 0) zeroed bytes and lets `initialize` fill them once.
    package init<E: Error>(
        count: Int,
        initialize: (UnsafeMutablePointer<UInt8>) throws(E) -> Void
    ) throws(E) {
        precondition(count > 0, "SecureBytes holds keys, never empty")
        let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: count)
        buffer.initialize(repeating: 0)
        let raw = UnsafeMutableRawBufferPointer(buffer)
        do {
            // allocate(capacity:) with a positive count never yields a nil base address.
            guard let base = buffer.baseAddress else { preconditionFailure("allocation returned no memory") }
            try initialize(base)
        } catch {
            Self.wipe(raw)
            raw.deallocate()
            throw error
        }
        storage = raw
    }

    /// Copies `bytes` in; the caller remains responsible for wiping its own array.
    package convenience init(copying bytes: some Collection<UInt8>) {
        self.init(count: bytes.count) { base in
            UnsafeMutableRawBufferPointer(start: base, count: bytes.count).copyBytes(from: bytes)
        }
    }

    deinit {
        Self.wipe(storage)
        storage.deallocate()
    }

    package var count: Int { storage.count }

    package func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(storage))
    }

    /// The buffer as a C `const unsigned char *`; every `SecureBytes` we make is non-empty.
    package func withBytePointer<R, E: Error>(_ body: (UnsafePointer<UInt8>) throws(E) -> R) throws(E) -> R {
        guard let base = storage.baseAddress else { preconditionFailure("SecureBytes is never empty") }
        return try body(UnsafePointer(base.assumingMemoryBound(to: UInt8.self)))
    }

    /// A new buffer holding the first `count` bytes (HKDF outputs → cipher keys).
    package func prefix(_ count: Int) -> SecureBytes {
        SecureBytes(copying: UnsafeRawBufferPointer(rebasing: storage.prefix(count)))
    }

    /// An ordinary array copy, for keys that must leave the process (persisted
    /// identity) and for tests. The copy is not wiped automatically.
    package var bytes: [UInt8] { Array(storage) }

    package static func wipe(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        sodium_memzero(base, buffer.count)
    }

    /// Best-effort wipe of a temporary array that held secret material.
    package static func wipe(_ array: inout [UInt8]) {
        array.withUnsafeMutableBytes { wipe($0) }
    }
}
