import Foundation
import Testing
@testable import LocalFirstSync
@testable import LFSyncContent
@testable import LFSyncSystem
@testable import LFSyncWire

/// A seeded mutation fuzzer for the frame decoder and the message codec, run
/// as an ordinary test: reproducible (fixed seed), bounded (a few thousand
/// cases by default; set `LFSYNC_FUZZ_ITERATIONS` for a longer run) and
/// checking more than "did not crash": whatever decodes must re-encode to the
/// same message and stay within the limits, and most mutations must be caught.
@Suite struct WireFuzzTests {
    static let iterations = ProcessInfo.processInfo.environment["LFSYNC_FUZZ_ITERATIONS"].flatMap(Int.init) ?? 3_000
    static let seed: UInt64 = 0x5EED_F00D

    enum Mutation: CaseIterable {
        case flipBit, setByte, truncate, insertBytes, deleteRange, overwriteLength, overwriteUInt16, duplicateSlice
    }

    /// Values that stress length and count checks when written over a field.
    static let interestingUInt32: [UInt32] = [0, 1, 2, 0x7F, 0xFF, 0x100, 0xFFFF, 0x1_0000, 100_000, 100_001,
                                               0x40_0000, 0x100_0000, 0x100_0001, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF]

    struct Tally {
        var inputs = 0
        var rejected = 0
        var messages = 0
        var frameErrors = 0
        var wireErrors = 0
        var rejectedByMutation: [Mutation: Int] = [:]
        var usedMutation: [Mutation: Int] = [:]
    }

    static func random(_ generator: inout SplitMix64, below bound: Int) -> Int {
        bound <= 0 ? 0 : Int(generator.next() % UInt64(bound))
    }

    static func mutate(_ input: [UInt8], with mutation: Mutation, _ generator: inout SplitMix64) -> [UInt8] {
        var bytes = input
        let position = random(&generator, below: bytes.count)
        switch mutation {
        case .flipBit:
            if !bytes.isEmpty { bytes[position] ^= 1 << UInt8(random(&generator, below: 8)) }
        case .setByte:
            if !bytes.isEmpty { bytes[position] = UInt8(truncatingIfNeeded: generator.next()) }
        case .truncate:
            bytes = Array(bytes.prefix(position))
        case .insertBytes:
            bytes.insert(contentsOf: generator.bytes(1 + random(&generator, below: 16)), at: position)
        case .deleteRange:
            bytes.removeSubrange(position..<min(bytes.count, position + 1 + random(&generator, below: 16)))
        case .overwriteLength:
            let value = interestingUInt32[random(&generator, below: interestingUInt32.count)]
            for (index, shift) in [24, 16, 8, 0].enumerated() where position + index < bytes.count {
                bytes[position + index] = UInt8(truncatingIfNeeded: value >> UInt32(shift))
            }
        case .overwriteUInt16:
            let value = [UInt16(0), 1, 63, 64, 0xFF, 0xFFFF][random(&generator, below: 6)]
            if position + 1 < bytes.count {
                bytes[position] = UInt8(value >> 8)
                bytes[position + 1] = UInt8(truncatingIfNeeded: value)
            }
        case .duplicateSlice:
            let end = min(bytes.count, position + 1 + random(&generator, below: 64))
            bytes.insert(contentsOf: bytes[position..<end], at: end)
        }
        return bytes
    }

    /// Checks what a successful decode promises: it re-encodes (we never
    /// accept what we would refuse to send), decodes back to the same value,
    /// is canonical (the same bytes: every message, offers included, has one
    /// encoding), and stays within every limit.
    static func checkDecoded(_ message: WireMessage, from frame: Frame, decompressor: borrowing ZstdDecompressor) {
        do {
            let reencoded = try message.frame()
            #expect(try WireMessage(frame: reencoded) == message)
            #expect(reencoded == frame, "non-canonical encoding accepted for \(message.type)")
        } catch {
            Issue.record("decoded \(message.type) does not re-encode: \(error)")
        }
        switch message {
        case let .offer(offer):
            #expect(offer.assets.count <= WireMessage.Offer.maxAssets)
            #expect(offer.assets.reduce(0) { $0 + $1.placedFileCount } <= WireMessage.Offer.maxPlacedFiles)
            for asset in offer.assets {
                #expect(asset.files.count <= Asset.Limits.maxFilesPerAsset)
                #expect(asset.files.allSatisfy { $0.manifest.chunks.count <= FileManifest.Limits.maxChunkCount })
            }
        case let .chunk(chunk):
            #expect(chunk.payload.decodedLength <= Int(ChunkerConfiguration.absoluteMaxChunkSize))
            do throws(WireError) {
                let data = try chunk.payload.decoded(using: decompressor)
                #expect(data.count == chunk.payload.decodedLength)
            } catch {
                // A typed rejection of the compressed bytes is a fine outcome.
            }
        default:
            break
        }
    }

    /// Feeds `stream` to a frame decoder in random pieces and decodes every
    /// frame; returns whether anything was rejected.
    static func process(
        stream: [UInt8], _ generator: inout SplitMix64, tally: inout Tally, decompressor: borrowing ZstdDecompressor
    ) -> Bool {
        var decoder = FrameDecoder()
        var offset = 0
        var rejected = false
        do throws(FrameError) {
            while offset < stream.count {
                let length = min(stream.count - offset, 1 + random(&generator, below: 4_096))
                try decoder.append(stream[offset..<offset + length])
                offset += length
                while let frame = try decoder.nextFrame() {
                    #expect(frame.payload.count <= decoder.maxFrameLength)
                    rejected = decodeFrame(frame, tally: &tally, decompressor: decompressor) || rejected
                }
            }
            try decoder.finish()
        } catch {
            tally.frameErrors += 1
            rejected = true
        }
        return rejected
    }

    static func decodeFrame(_ frame: Frame, tally: inout Tally, decompressor: borrowing ZstdDecompressor) -> Bool {
        do throws(WireError) {
            let message = try WireMessage(frame: frame)
            tally.messages += 1
            checkDecoded(message, from: frame, decompressor: decompressor)
            return false
        } catch {
            tally.wireErrors += 1
            #expect(!error.description.isEmpty)
            return true
        }
    }

    static func seedFrames() throws -> [Frame] {
        try WireFixtures.messages.map { try $0.frame() }
    }

    @Test func mutatedFramesEndInSuccessOrTypedErrors() throws {
        let seeds = try Self.seedFrames()
        var generator = SplitMix64(seed: Self.seed)
        var tally = Tally()
        let decompressor = ZstdDecompressor()
        for iteration in 0..<Self.iterations {
            let seed = seeds[iteration % seeds.count]
            let mutationCount = 1 + Self.random(&generator, below: 3)
            let mutations = (0..<mutationCount).map { _ in Mutation.allCases[Self.random(&generator, below: Mutation.allCases.count)] }
            // Half the cases mutate the whole frame (header included) and go
            // through the frame decoder; the other half mutate only the
            // payload, so more of them reach deep into the message decoders.
            let rejected: Bool
            if iteration % 2 == 0 {
                var bytes = seed.encoded()
                for mutation in mutations { bytes = Self.mutate(bytes, with: mutation, &generator) }
                rejected = Self.process(stream: bytes, &generator, tally: &tally, decompressor: decompressor)
            } else {
                var payload = seed.payload
                for mutation in mutations { payload = Self.mutate(payload, with: mutation, &generator) }
                rejected = Self.decodeFrame(Frame(type: seed.type, payload: payload), tally: &tally, decompressor: decompressor)
            }
            tally.inputs += 1
            if rejected { tally.rejected += 1 }
            for mutation in Set(mutations) {
                tally.usedMutation[mutation, default: 0] += 1
                if rejected { tally.rejectedByMutation[mutation, default: 0] += 1 }
            }
        }
        if ProcessInfo.processInfo.environment["LFSYNC_FUZZ_VERBOSE"] != nil {
            print("wire fuzz: \(tally.inputs) inputs, \(tally.rejected) rejected, \(tally.messages) messages decoded, "
                  + "\(tally.frameErrors) frame errors, \(tally.wireErrors) message errors, by mutation: \(tally.rejectedByMutation) of \(tally.usedMutation)")
        }
        // Mutations of free-form bytes (nonces, hashes, chunk data, text) are
        // legitimately accepted; structure damage must be caught. Seen with
        // this seed: roughly two thirds rejected.
        #expect(tally.rejected * 2 > tally.inputs, "only \(tally.rejected) of \(tally.inputs) mutated inputs rejected")
        #expect(tally.messages > 0 && tally.frameErrors > 0 && tally.wireErrors > 0)
        for mutation in [Mutation.truncate, .deleteRange, .insertBytes] {
            let used = tally.usedMutation[mutation, default: 0]
            #expect(tally.rejectedByMutation[mutation, default: 0] * 10 >= used * 8, "\(mutation) should almost always be caught")
        }
    }

    @Test func randomBytesEndInSuccessOrTypedErrors() {
        var generator = SplitMix64(seed: Self.seed ^ 0xFFFF)
        var tally = Tally()
        let decompressor = ZstdDecompressor()
        for iteration in 0..<Self.iterations {
            let bytes = generator.bytes(Self.random(&generator, below: 2_048))
            if iteration % 2 == 0 {
                _ = Self.process(stream: bytes, &generator, tally: &tally, decompressor: decompressor)
            } else {
                // Random payloads under every known type, straight into the message decoder.
                let type = WireMessageType.allCases[iteration / 2 % WireMessageType.allCases.count]
                _ = Self.decodeFrame(Frame(type: type.rawValue, payload: bytes), tally: &tally, decompressor: decompressor)
            }
        }
        #expect(tally.frameErrors + tally.wireErrors > Self.iterations / 2)
    }

    @Test func seedsThemselvesDecode() throws {
        // The fuzzer starts from valid inputs; make sure they are.
        var generator = SplitMix64(seed: 1)
        var tally = Tally()
        let decompressor = ZstdDecompressor()
        let stream = Array(try Self.seedFrames().map { $0.encoded() }.joined())
        #expect(!Self.process(stream: stream, &generator, tally: &tally, decompressor: decompressor))
        #expect(tally.messages == WireFixtures.messages.count)
    }
}
