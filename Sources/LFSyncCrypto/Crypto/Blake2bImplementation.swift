#if canImport(Glibc)
import Glibc
#endif

/// Which library computes keyed BLAKE2b. Both give the same bytes for the same key
/// and input (a test holds them to each other and to Python's `hashlib`); they
/// differ only in speed, and which is faster depends on the processor (see
/// `KeyedBlake2b`).
package enum Blake2bImplementation: String, Sendable, CaseIterable, CustomStringConvertible {
    case libsodium
    case libcrypto

    package var description: String { rawValue }

    /// The faster of the two on this machine, decided once per process: each hashes
    /// the same 256 KiB three times, alternating, and the best times are compared
    /// (about 2 ms in all). `LFSYNC_BLAKE2B=libsodium` or `=libcrypto` decides
    /// instead, for benchmarks and for tests of each.
    package static let fastest: Blake2bImplementation = {
        if let forced = getenv("LFSYNC_BLAKE2B").map({ String(cString: $0) }), let choice = Blake2bImplementation(rawValue: forced) {
            return choice
        }
        return timed(bytes: 256 << 10, rounds: 3).min { $0.seconds < $1.seconds }?.implementation ?? .libsodium
    }()

    /// The best of `rounds` timings of each implementation hashing `bytes` bytes.
    package static func timed(bytes: Int, rounds: Int) -> [(implementation: Blake2bImplementation, seconds: Double)] {
        let input = [UInt8](unsafeUninitializedCapacity: bytes) { buffer, count in
            for index in 0..<bytes { buffer[index] = UInt8(truncatingIfNeeded: index &* 131 &+ index >> 8) }
            count = bytes
        }
        let key = Array("lfsync timing".utf8)
        var best = [Double](repeating: .infinity, count: allCases.count)
        let clock = ContinuousClock()
        for _ in 0..<rounds {
            for (index, implementation) in allCases.enumerated() {
                var hasher = KeyedBlake2b(key: key, implementation: implementation)
                let elapsed = clock.measure {
                    hasher.update(input)
                    _ = hasher.finalizeAndReset()
                }
                let (seconds, attoseconds) = elapsed.components
                best[index] = min(best[index], Double(seconds) + Double(attoseconds) * 1e-18)
            }
        }
        return zip(allCases, best).map { ($0, $1) }
    }
}
