import Testing
@testable import LocalFirstSync
@testable import LFSyncCrypto
@testable import LFSyncSystem

@Suite struct Blake2bTests {
    /// RFC 7693 Appendix A gives BLAKE2b-512("abc"); libsodium's default 32-byte
    /// output is a different parameter block, so check it against the well-known value too.
    @Test func knownAnswers() {
        #expect(Blake2b.hash(Array("abc".utf8)).hex == "bddd813c634239723171ef3fee98579b94964e3bb1cb3e427262c8c068d52319")
        #expect(Blake2b.hash([]).hex == "0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a8")
        let digest512 = Blake2b.digest(Array("abc".utf8), outputLength: 64)
        #expect(digest512.prefix(8) == [0xBA, 0x80, 0xA5, 0x3F, 0x98, 0x1C, 0x4D, 0x0D])
    }

    @Test func streamingEqualsOneShot() {
        var generator = SplitMix64(seed: 7)
        let data = generator.bytes(300_001)
        var hasher = Blake2b()
        var offset = 0
        for step in [1, 127, 128, 129, 4096, 65_536, 300_001] where offset < data.count {
            let end = min(data.count, offset + step)
            hasher.update(Array(data[offset..<end]))
            offset = end
        }
        hasher.update(Array(data[offset...]))
        #expect(hasher.finalizeHash() == Blake2b.hash(data))
    }

    @Test func finalizeAndResetStartsOver() {
        var hasher = Blake2b()
        hasher.update(Array("first".utf8))
        #expect(hasher.finalizeHashAndReset() == Blake2b.hash(Array("first".utf8)))
        hasher.update(Array("second".utf8))
        #expect(hasher.finalizeHashAndReset() == Blake2b.hash(Array("second".utf8)))
    }

    @Test func hashHexRoundTripAndRejectsGarbage() {
        let hash = Blake2b.hash(Array("x".utf8))
        #expect(Hash256(hex: hash.hex) == hash)
        #expect(Hash256(hex: hash.hex.uppercased()) == hash)
        #expect(Hash256(hex: "zz" + hash.hex.dropFirst(2)) == nil)
        #expect(Hash256(hex: String(hash.hex.dropLast())) == nil)
        #expect(Hash256(bytes: [UInt8](repeating: 0, count: 31)) == nil)
    }

    /// Raw memory (a column SQLite lends) reads as the same hash as an array of its bytes.
    @Test func hashFromRawMemoryEqualsHashFromBytes() {
        for seed in 0..<8 {
            let bytes = (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ seed &* 101) }
            let fromArray = Hash256(bytes: bytes)
            let fromMemory = bytes.withUnsafeBytes { Hash256(bytes: $0) }
            #expect(fromMemory != nil && fromMemory == fromArray && fromMemory?.bytes == bytes)
        }
        let long = [UInt8](repeating: 7, count: 33)
        #expect(long.withUnsafeBytes { Hash256(bytes: UnsafeRawBufferPointer(rebasing: $0[1...])) } == Hash256(bytes: [UInt8](repeating: 7, count: 32)))
        #expect(long.withUnsafeBytes { Hash256(bytes: $0) } == nil)
        #expect([UInt8]().withUnsafeBytes { Hash256(bytes: $0) } == nil)
    }
}
