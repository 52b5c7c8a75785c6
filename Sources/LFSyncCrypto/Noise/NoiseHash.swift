/// Noise's hash functions for BLAKE2b (spec §4.3, §12.8): `HASH`, `HMAC-HASH`
/// and `HKDF`.
///
/// HMAC is the RFC 2104 construction over BLAKE2b with BLOCKLEN = 128, as the
/// spec requires — not BLAKE2b's native keyed mode, which gives different
/// bytes and would not interoperate.
enum NoiseHash {
    package static func hash(_ parts: [UInt8]...) -> [UInt8] {
        var hasher = Blake2b(outputLength: Noise.hashLength)
        for part in parts { hasher.update(part) }
        return hasher.finalize()
    }

    /// HMAC-BLAKE2b(key, data[0] || data[1] || ...), result in wiped memory.
    package static func hmac(key: UnsafeRawBufferPointer, data: [UnsafeRawBufferPointer]) -> SecureBytes {
        var block = [UInt8](repeating: 0, count: Noise.blockLength)
        defer { SecureBytes.wipe(&block) }
        if key.count > Noise.blockLength {
            var hasher = Blake2b(outputLength: Noise.hashLength)
            hasher.update(key)
            var digest = hasher.finalize()
            block.replaceSubrange(0..<digest.count, with: digest)
            SecureBytes.wipe(&digest)
        } else {
            block.withUnsafeMutableBytes { $0.copyMemory(from: key) }
        }

        for index in block.indices { block[index] ^= 0x36 }
        var inner = Blake2b(outputLength: Noise.hashLength)
        inner.update(block)
        for part in data { inner.update(part) }
        var innerDigest = inner.finalize()
        defer { SecureBytes.wipe(&innerDigest) }

        for index in block.indices { block[index] ^= 0x36 ^ 0x5c }
        var outer = Blake2b(outputLength: Noise.hashLength)
        outer.update(block)
        outer.update(innerDigest)
        var result = outer.finalize()
        defer { SecureBytes.wipe(&result) }
        return SecureBytes(copying: result)
    }

    /// `HKDF(chaining_key, input_key_material, 2)`.
    package static func hkdf2(chainingKey: SecureBytes, inputKeyMaterial: UnsafeRawBufferPointer) -> (SecureBytes, SecureBytes) {
        let outputs = hkdf(chainingKey: chainingKey, inputKeyMaterial: inputKeyMaterial, count: 2)
        return (outputs[0], outputs[1])
    }

    /// `HKDF(chaining_key, input_key_material, 3)`.
    package static func hkdf3(
        chainingKey: SecureBytes, inputKeyMaterial: UnsafeRawBufferPointer
    ) -> (SecureBytes, SecureBytes, SecureBytes) {
        let outputs = hkdf(chainingKey: chainingKey, inputKeyMaterial: inputKeyMaterial, count: 3)
        return (outputs[0], outputs[1], outputs[2])
    }

    /// temp_key = HMAC(ck, ikm); output_i = HMAC(temp_key, output_{i-1} || byte(i)).
    private static func hkdf(chainingKey: SecureBytes, inputKeyMaterial: UnsafeRawBufferPointer, count: Int) -> [SecureBytes] {
        let tempKey = chainingKey.withUnsafeBytes { hmac(key: $0, data: [inputKeyMaterial]) }
        var outputs: [SecureBytes] = []
        for counter in 1...count {
            let counterByte = [UInt8(counter)]
            let next = tempKey.withUnsafeBytes { keyBuffer in
                counterByte.withUnsafeBytes { counterBuffer in
                    if let previous = outputs.last {
                        previous.withUnsafeBytes { hmac(key: keyBuffer, data: [$0, counterBuffer]) }
                    } else {
                        hmac(key: keyBuffer, data: [counterBuffer])
                    }
                }
            }
            outputs.append(next)
        }
        return outputs
    }
}
