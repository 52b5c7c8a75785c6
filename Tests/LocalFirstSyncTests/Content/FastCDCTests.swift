import Foundation
import Testing
@testable import LocalFirstSync
@testable import LFSyncContent
@testable import LFSyncCrypto
@testable import LFSyncSystem

@Suite struct FastCDCTests {
    static func randomBytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var generator = SplitMix64(seed: seed)
        return generator.bytes(count)
    }

    @Test func deterministicAndIndependentOfBufferSizes() {
        let data = Self.randomBytes(6 << 20, seed: 1)
        let reference = FastCDC.chunkLengths(of: data)
        #expect(reference == FastCDC.chunkLengths(of: data))
        for bufferSize in [1, 4093, 65_536, 1 << 20, 3 << 20] {
            var chunker = FastCDC()
            var lengths: [Int] = []
            var chunkStart = 0
            var offset = 0
            data.withUnsafeBytes { all in
                while offset < all.count {
                    let end = min(all.count, offset + bufferSize)
                    chunker.scan(UnsafeRawBufferPointer(rebasing: all[offset..<end])) { cut in
                        lengths.append(offset + cut - chunkStart)
                        chunkStart = offset + cut
                    }
                    offset = end
                    if bufferSize == 1, lengths.count > 3 { break }  // one-byte feeding is slow; the first cuts suffice
                }
            }
            if bufferSize == 1 {
                #expect(Array(reference.prefix(lengths.count)) == lengths)
            } else {
                if chunker.finish() { lengths.append(data.count - chunkStart) }
                #expect(lengths == reference, "buffer size \(bufferSize)")
            }
        }
    }

    @Test func respectsMinimumAndMaximum() {
        let configuration = ChunkerConfiguration.default
        for data in [Self.randomBytes(20 << 20, seed: 2), [UInt8](repeating: 0, count: 5 << 20), [UInt8](repeating: 0xAB, count: 3 << 20 + 17)] {
            let lengths = FastCDC.chunkLengths(of: data)
            #expect(lengths.reduce(0, +) == data.count)
            #expect(lengths.allSatisfy { $0 <= configuration.maxSize })
            #expect(lengths.dropLast().allSatisfy { $0 >= configuration.minSize })
        }
        // Below the minimum a file is one chunk; an empty one has none.
        #expect(FastCDC.chunkLengths(of: Self.randomBytes(1000, seed: 3)) == [1000])
        #expect(FastCDC.chunkLengths(of: []) == [])
    }

    @Test func averageIsNearConfigured() {
        let lengths = FastCDC.chunkLengths(of: Self.randomBytes(64 << 20, seed: 4))
        let mean = lengths.reduce(0, +) / lengths.count
        #expect(mean > 192 << 10 && mean < 384 << 10, "mean chunk \(mean)")
    }

    /// Inserting 1 KiB near the start of a 20 MiB file may only disturb the chunks around the edit.
    @Test func shiftResistance() {
        let original = Self.randomBytes(20 << 20, seed: 5)
        var edited = original
        edited.insert(contentsOf: Self.randomBytes(1024, seed: 6), at: 100_000)
        let before = Set(Self.chunkHashes(original))
        let after = Self.chunkHashes(edited)
        let changed = after.filter { !before.contains($0) }
        #expect(after.count > 40)
        #expect(changed.count <= 3, "\(changed.count) of \(after.count) chunks changed")
    }

    static func chunkHashes(_ data: [UInt8]) -> [Hash256] {
        var hasher = ChunkingHasher()
        data.withUnsafeBytes { hasher.update($0) }
        return hasher.finish().chunks.map(\.hash)
    }

    /// Cut points checked in as a vector, produced by the independent Python
    /// reference in Vectors/fastcdc_reference.py from the PROTOCOL.md text.
    @Test func goldenCutPoints() throws {
        struct Golden: Decodable {
            var seed: UInt64
            var length: Int
            var firstBytesHex: String
            var gear0Hex: String
            var cutPoints: [Int]
        }
        let url = TestSupport.vectorsDirectory.appendingPathComponent("fastcdc-golden.json")
        let golden = try JSONDecoder().decode(Golden.self, from: Data(contentsOf: url))
        var generator = SplitMix64(seed: golden.seed)
        let data = generator.bytes(golden.length)
        #expect(data.prefix(16).map { String(format: "%02x", $0) }.joined() == golden.firstBytesHex)
        #expect(String(format: "%016llx", GearTable.values[0]) == golden.gear0Hex)
        var end = 0
        let cuts = FastCDC.chunkLengths(of: data).map { length -> Int in
            end += length
            return end
        }
        #expect(cuts == golden.cutPoints)
    }

    @Test func chunkingHasherMatchesIndependentHashes() {
        let data = Self.randomBytes(3 << 20 + 12_345, seed: 8)
        var hasher = ChunkingHasher()
        // Feed in uneven pieces to cross chunk boundaries inside a buffer.
        data.withUnsafeBytes { all in
            var offset = 0
            var step = 1
            while offset < all.count {
                let end = min(all.count, offset + step)
                hasher.update(UnsafeRawBufferPointer(rebasing: all[offset..<end]))
                offset = end
                step = step * 3 + 7
            }
        }
        let (fileHash, chunks) = hasher.finish()
        #expect(fileHash == SpecHashes.file(data))
        var offset = 0
        for (chunk, length) in zip(chunks, FastCDC.chunkLengths(of: data)) {
            #expect(Int(chunk.length) == length)
            #expect(chunk.hash == SpecHashes.chunk(data[offset..<offset + length]))
            offset += length
        }
        #expect(offset == data.count)
    }

    /// One hasher reused file after file (as each scan worker does): nothing of one
    /// file leaks into the next, whatever its size.
    @Test func aReusedHasherMatchesIndependentHashesForEverySize() {
        var hasher = ChunkingHasher()
        for (size, seed) in [(3 << 20, 1), (10_000, 2), (0, 3), (64 << 10, 4), (1 << 20 + 1, 5), (1, 6)] as [(Int, UInt64)] {
            let data = Self.randomBytes(size, seed: seed)
            data.withUnsafeBytes { all in
                var offset = 0
                while offset < all.count {
                    let end = min(all.count, offset + 100_000)
                    hasher.update(UnsafeRawBufferPointer(rebasing: all[offset..<end]))
                    offset = end
                }
            }
            let (fileHash, chunks) = hasher.finishAndReset()
            #expect(fileHash == SpecHashes.file(data), "size \(size)")
            #expect(chunks.map { Int($0.length) } == FastCDC.chunkLengths(of: data), "size \(size)")
            if chunks.count == 1 { #expect(chunks[0].hash == SpecHashes.chunk(data)) }
            #expect(size > 0 || chunks.isEmpty)
        }
    }
}
