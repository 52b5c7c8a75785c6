import Testing
@testable import LocalFirstSync
@testable import LFSyncCrypto

/// HMAC-BLAKE2b and HKDF against Python's independent `hmac` + `hashlib.blake2b`
/// (block size 128), including the key-longer-than-a-block path the Noise
/// vectors never reach.
@Suite("Noise HMAC and HKDF")
struct NoiseHashTests {
    private func hmacHex(key: [UInt8], message: [UInt8]) -> String {
        key.withUnsafeBytes { keyBuffer in
            message.withUnsafeBytes { messageBuffer in
                NoiseHex.encode(NoiseHash.hmac(key: keyBuffer, data: [messageBuffer]).bytes)
            }
        }
    }

    @Test("HMAC-BLAKE2b known answers")
    func hmac() {
        #expect(hmacHex(key: Array("key".utf8), message: Array("The quick brown fox jumps over the lazy dog".utf8))
            == "92294f92c0dfb9b00ec9ae8bd94d7e7d8a036b885a499f149dfe2fd2199394aaaf6b8894a1730cccb2cd050f9bcf5062a38b51b0dab33207f8ef35ae2c9df51b")
        #expect(hmacHex(key: (0..<128).map(UInt8.init), message: Array("block key".utf8))
            == "1022ce4889770c968fad4730f54147cead6445cce7c2efb2a36c95a01ce6f68dff6f24d32e25ccc613ae6b9c90ea2a0b3edac08f20e31056372e98e91b5ecb62")
        #expect(hmacHex(key: (0..<200).map(UInt8.init), message: Array("long key".utf8))
            == "3657d96bcab1b777275ca0c25f3bab9388d8ac4d3914495a2b495c756b52dd22dc9531abcd00141e683e53e77cf10f468330f65c569c44f0f54edd3ad89cb566")
    }

    @Test("HKDF with three outputs")
    func hkdf() {
        let chainingKey = SecureBytes(copying: (0..<64).map(UInt8.init))
        let material = [UInt8](repeating: 0xaa, count: 32)
        let (first, second, third) = material.withUnsafeBytes {
            NoiseHash.hkdf3(chainingKey: chainingKey, inputKeyMaterial: $0)
        }
        #expect(NoiseHex.encode(first.bytes) == "f47218b1498130a0f442a4c163ff0c53e981631f793ea49eb4475cb9c93bda51828c70c500e2b7ab2380e72e886175692d69f38e952cd8cfb2216bb11cfe608c")
        #expect(NoiseHex.encode(second.bytes) == "ca94dd29540f07d67e47c1ab1a1304de16aaa2ffabcadff325f8ff8f2fa34d86a5ed1537174bba0b0cae2be77cfe77b02a6a1a25fb0bb7e9615a4ca1ed23927e")
        #expect(NoiseHex.encode(third.bytes) == "08bd67aafab0e5e41856416b83f1c101741fc39e68a52bb9312f563ab2eb4e9a4d17efb4e8bd9893b1b51b4cbedadef5644fc8eb2bf743aaf7ba5c02a4745382")
    }
}
