import LFSyncCrypto

/// The 256 random 64-bit values of the gear hash.
///
/// Derived, not pasted, so another implementation can reproduce it from one
/// sentence (PROTOCOL.md, "Gear table"): entry `i` is the first 8 bytes, read
/// little-endian, of BLAKE2b-256 over the ASCII bytes `lfsync-fastcdc-gear-v1`
/// followed by the single byte `i`.
enum GearTable {
    package static let domain = Array("lfsync-fastcdc-gear-v1".utf8)

    package static let values: [UInt64] = (0..<256).map { index in
        let digest = Blake2b.hash(domain + [UInt8(index)]).bytes
        var value: UInt64 = 0
        for byte in digest[0..<8].reversed() {
            value = value << 8 | UInt64(byte)
        }
        return value
    }
}
