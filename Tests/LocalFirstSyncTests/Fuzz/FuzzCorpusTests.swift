import Foundation
import Testing
@testable import LFSyncContent
@testable import LFSyncCrypto
@testable import LFSyncFixtures
@testable import LFSyncFuzzing
@testable import LFSyncWire

/// The fuzzers' seed corpus (`Fuzz/corpus/<target>/`, grown by `make fuzz`)
/// replayed on every test run: each input that once mattered stays a test.
/// The seeds are real encodings (frames from the encoder, media from the
/// fixtures); `make fuzz-seeds` writes any that are missing.
@Suite struct FuzzCorpusTests {
    static let corpus = TestSupport.packageRoot.appendingPathComponent("Fuzz/corpus")
    static let writing = ProcessInfo.processInfo.environment["LFSYNC_WRITE_FUZZ_SEEDS"] == "1"

    static func seeds(for target: FuzzTarget) throws -> [[UInt8]] {
        switch target {
        case .frames:
            return try WireFixtures.messages.map { try $0.frame().encoded() }
                + [try WireFixtures.messages.flatMap { try $0.frame().encoded() }]
        case .noiseFramer:
            var stream: [UInt8] = [7]
            for length in [0, 1, 16, 300, 65535] { NoiseMessageFramer.prefixed([UInt8](repeating: 0xAB, count: length), into: &stream) }
            return [stream, [0] + stream.dropFirst(), [255] + SegmentHeader.marker + stream.dropFirst()]
        case .channel:
            let ping = try WireMessage.ping(.init(nonce: 9)).frame().encoded()
            let chunk = try WireMessage.chunk(.init(offerID: 7, contentID: WireFixtures.livePhoto.contentID, fileIndex: 0, chunkIndex: 1,
                                                    payload: .raw([UInt8](repeating: 0x33, count: 300)))).frame().encoded()
            let fields = Frame.headerLength + WireMessage.Chunk.fieldsLength
            func message(_ bytes: some Collection<UInt8>) -> [UInt8] { [0, UInt8((bytes.count - 1) >> 8), UInt8((bytes.count - 1) & 0xFF)] + bytes }
            let honestSegment = message(ping + chunk.prefix(fields)) + [1, 0x01, 0x2B, 0] + chunk.dropFirst(fields)
            return [
                message(ping) + [16],
                honestSegment + [200],
                honestSegment + message(ping) + [3],
                message(ping + chunk.prefix(fields)) + [3, 0x01, 0x2B, 0] + message(ping) + [64],
                [4] + message(ping) + [1],
                [2, 0, 5, 0, 3, 1, 2, 3, 4] + message(ping) + [9],
            ]
        case .zstd:
            let raw = WireFixtures.compressibleChunk
            let compressor = ZstdCompressor()
            let made = compressor.compress(raw, maxOutputLength: raw.count)
            let compressed = try #require(made)
            let length = raw.count
            return [[UInt8(length >> 16), UInt8((length >> 8) & 0xFF), UInt8(length & 0xFF)] + compressed, [0, 0, 1] + compressed]
        case .jpeg:
            return [MediaFixtures.liveStillJPEG(identifier: "4B6A9E64-7E18-4A4C-9B45-0F2A1C3D5E6F"),
                    MediaFixtures.jpeg(identifier: "A", littleEndian: true, leadingJFIF: true), MediaFixtures.liveStillJPEG(identifier: nil)]
        case .isoBaseMedia:
            return [MediaFixtures.liveStillHEIC(identifier: "4B6A9E64-7E18-4A4C-9B45-0F2A1C3D5E6F"),
                    MediaFixtures.liveVideoMOV(identifier: "4B6A9E64-7E18-4A4C-9B45-0F2A1C3D5E6F"),
                    MediaFixtures.heic(identifier: "B", options: MediaFixtures.HEICOptions(exifInIdat: true)), MediaFixtures.liveVideoMOV(identifier: nil)]
        case .tiff:
            return [MediaFixtures.appleTIFF(identifier: "C"), MediaFixtures.appleTIFF(identifier: "D", littleEndian: true),
                    MediaFixtures.exifTIFF(makerNote: nil)]
        case .txt:
            func record(_ entries: String...) -> [UInt8] { entries.flatMap { [UInt8($0.utf8.count)] + Array($0.utf8) } }
            return [record("id=QMXYRXN-MA7VDWS-IUJPPWT-MHJC7XL-DPVZ42L-YMUNQIA-NHLLY2C-CFKA3Q5", "v=3"), record("v=2", "ID=x", "other"), [5, 0x76]]
        case .path:
            return ["DCIM/100APPLE/IMG_0001.HEIC", "../etc/passwd", "a//b", ".lfsync/staging/x", "café/e\u{301}", String(repeating: "a/", count: 2100)]
                .map { Array($0.utf8) } + [[0x66, 0xFF, 0x2F, 0x00]]
        }
    }

    static func name(of input: [UInt8]) -> String { "seed-" + Blake2b.hash(input).hex.prefix(16) }

    /// Every target has its directory and every seed the generator makes is in it.
    @Test(arguments: FuzzTarget.allCases)
    func everyTargetHasItsSeeds(_ target: FuzzTarget) throws {
        let directory = Self.corpus.appendingPathComponent(target.rawValue)
        let seeds = try Self.seeds(for: target)
        #expect(seeds.count >= 2)
        if Self.writing {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            for seed in seeds { try Data(seed).write(to: directory.appendingPathComponent(Self.name(of: seed))) }
        }
        let present = Set((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
        let missing = seeds.map(Self.name(of:)).filter { !present.contains($0) }
        #expect(missing.isEmpty, "\(missing.count) seeds of \(target.rawValue) are not in Fuzz/corpus: run make fuzz-seeds")
    }

    /// The whole corpus, seeds and what the fuzzers kept, runs through its target without a trap.
    @Test(arguments: FuzzTarget.allCases)
    func theCorpusReplays(_ target: FuzzTarget) throws {
        let directory = Self.corpus.appendingPathComponent(target.rawValue)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(!names.isEmpty)
        for name in names {
            target.run(Array(try Data(contentsOf: directory.appendingPathComponent(name))))
        }
    }

    /// The seeds are what they claim to be: the media ones carry the identifier the reader finds.
    @Test func mediaSeedsAreReadable() throws {
        let jpeg = try Self.seeds(for: .jpeg)[0]
        #expect(try AppleContentIdentifierReader.contentIdentifier(in: jpeg) == "4B6A9E64-7E18-4A4C-9B45-0F2A1C3D5E6F")
        let heic = try Self.seeds(for: .isoBaseMedia)[0]
        #expect(try AppleContentIdentifierReader.contentIdentifier(in: heic) == "4B6A9E64-7E18-4A4C-9B45-0F2A1C3D5E6F")
    }
}
