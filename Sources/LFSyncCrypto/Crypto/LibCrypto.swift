internal import CCrypto

/// OpenSSL's libcrypto, wrapped once for the project: what is fetched from it once
/// per process, and how its failures become Swift values.
///
/// Why libcrypto at all (ARCHITECTURE.md, "Which library does what"): its
/// AES-256-GCM and ChaCha20-Poly1305 run two to two and a half times as fast as
/// libsodium 1.0.18's on the machines lfsync was measured on, and the bulk of a
/// transfer's CPU is the cipher. Its BLAKE2b is one of the two implementations
/// `Blake2bImplementation` chooses between.
enum LibCrypto {
    /// An algorithm fetched from the default provider. Fetching costs more than
    /// sealing a small message (OpenSSL 3 looks the name up in its provider
    /// tables), so it happens once; the fetched object is immutable and
    /// reference-counted by OpenSSL, safe to use from any thread.
    struct Algorithm: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    static let aes256GCM = cipher("AES-256-GCM")
    static let chaCha20Poly1305 = cipher("ChaCha20-Poly1305")
    static let blake2bMAC: Algorithm = {
        guard let mac = EVP_MAC_fetch(nil, "BLAKE2BMAC", nil) else {
            fatalError("libcrypto has no BLAKE2BMAC: \(lastError())")
        }
        return Algorithm(pointer: mac)
    }()

    private static func cipher(_ name: String) -> Algorithm {
        guard let cipher = EVP_CIPHER_fetch(nil, name, nil) else {
            fatalError("libcrypto has no \(name): \(lastError())")
        }
        return Algorithm(pointer: cipher)
    }

    /// The oldest error on this thread's OpenSSL error queue, as text, and the queue
    /// emptied: OpenSSL reports why a call failed there, not in its return value.
    static func lastError() -> String {
        let code = ERR_get_error()
        ERR_clear_error()
        guard code != 0 else { return "no reason given" }
        var text = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &text, text.count)
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
