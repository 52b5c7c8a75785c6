import Foundation
import Testing
@testable import LocalFirstSync
@testable import LocalFirstSyncTesting
@testable import LFSyncContent
import LFSyncWire
import LFSyncCrypto
import LFSyncSystem

/// The sender's check of what it reads: trust a settled file's unchanged status, hash anything else.
@Suite struct BroadcastChunkReaderTests {
    static func keys(_ asset: Asset) -> [(BroadcastChunkReader.Key, UInt64)] {
        var offset: UInt64 = 0
        return asset.files[0].manifest.chunks.enumerated().map { index, chunk in
            defer { offset += UInt64(chunk.length) }
            return (BroadcastChunkReader.Key(contentID: asset.contentID, fileIndex: 0, chunkIndex: index), offset)
        }
    }

    @Test func settledFilesAreReadWithoutHashingAndAnyEditIsStillCaught() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let path = root.appendingPathComponent("VID_0001.MOV")
            var bytes = [UInt8](repeating: 0, count: 3 << 20)
            for index in bytes.indices { bytes[index] = UInt8(truncatingIfNeeded: index &* 2_654_435_761 >> 13) }
            try TestSupport.write(bytes, to: path)
            try await TestSupport.waitForFilesToSettle()
            let scan = try await LibraryScanner(root: root).scan()
            let asset = try #require(scan.assets.first)
            let manifest = asset.files[0].manifest
            #expect(manifest.chunks.count > 2)

            let settled = try #require(scan.settledStatus[manifest.path])
            let trusting = BroadcastChunkReader(rootPath: root.path, peerCount: 1)
            let checking = BroadcastChunkReader(rootPath: root.path, peerCount: 1)
            for (key, offset) in Self.keys(asset) {
                let trusted = try await trusting.payload(for: key, file: manifest, chunkOffset: offset, settled: settled)
                let checked = try await checking.payload(for: key, file: manifest, chunkOffset: offset, settled: nil)
                #expect(trusted == checked)
            }
            #expect(await trusting.chunksHashed == 0)
            #expect(await checking.chunksHashed == manifest.chunks.count)

            // New bytes, same size, mtime put back: the ctime moved, so the chunk is hashed and refused.
            bytes[bytes.count - 10] ^= 0xFF
            try TestSupport.overwriteKeepingMtime(path, with: bytes)
            let afterEdit = BroadcastChunkReader(rootPath: root.path, peerCount: 1)
            let (lastKey, lastOffset) = try #require(Self.keys(asset).last)
            await #expect(throws: BroadcastChunkReader.Failure.sourceChanged(path: manifest.path)) {
                _ = try await afterEdit.payload(for: lastKey, file: manifest, chunkOffset: lastOffset, settled: settled)
            }
        }
    }

    /// A run of small files is read in one go, in the order asked; two peers asking for the
    /// same run get the same payloads from one read each; a file gone meanwhile fails only
    /// its own place in the run.
    @Test func aRunIsReadOnceForEveryPeerAndFailsOnlyWhereAFileIsGone() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            for index in 0..<12 {
                try TestSupport.write([UInt8](repeating: UInt8(index), count: 1000 + index), to: root.appendingPathComponent("note-\(index).txt"))
            }
            let scan = try await LibraryScanner(root: root).scan()
            let assets = scan.assets.sorted { $0.files[0].manifest.path < $1.files[0].manifest.path }
            #expect(assets.count == 12)
            let requests = assets.map { asset in
                BroadcastChunkReader.Request(key: .init(contentID: asset.contentID, fileIndex: 0, chunkIndex: 0),
                                             file: asset.files[0].manifest, offset: 0, settled: nil)
            }
            let gone = requests[5].file.path
            try FileManager.default.removeItem(at: root.appendingPathComponent(gone.string))

            let reader = BroadcastChunkReader(rootPath: root.path, peerCount: 2)
            await reader.beginBatch(0, keys: requests.map(\.key))
            async let first = reader.payloads(for: requests)
            async let second = reader.payloads(for: requests)
            let (one, other) = await (first, second)
            for (position, (a, b)) in zip(one, other).enumerated() {
                if position == 5 {
                    guard case .failure(.unreadable(path: gone, reason: _)) = a, case .failure = b else {
                        Issue.record("the missing file should fail its place, got \(a) and \(b)")
                        continue
                    }
                } else {
                    let payload = try a.get().payload
                    #expect(try b.get().payload == payload)
                    // "note-<n>.txt" holds 1000 + n bytes of n.
                    let name = requests[position].file.path.string
                    let n = try #require(Int(name.dropFirst("note-".count).dropLast(".txt".count)))
                    let expected = [UInt8](repeating: UInt8(n), count: 1000 + n)
                    #expect(try payload.decoded() == expected[...])
                }
            }
            #expect(await reader.diskReads == 11)
        }
    }

    /// Large chunks that two peers will send are sealed once, as they are read, and both
    /// peers get the same sealed bytes, which open to the chunk; a chunk only one peer
    /// needs, or a peer whose channel sends no segments, gets none.
    @Test func chunksTwoPeersNeedAreSealedOnceForBoth() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            var bytes = [UInt8](repeating: 0, count: 2 << 20)
            for index in bytes.indices { bytes[index] = UInt8(truncatingIfNeeded: index &* 2_654_435_761 >> 13) }
            try TestSupport.write(bytes, to: root.appendingPathComponent("VID_0002.MOV"))
            let scan = try await LibraryScanner(root: root).scan()
            let asset = try #require(scan.assets.first)
            let manifest = asset.files[0].manifest
            let requests = Self.keys(asset).map { key, offset in
                BroadcastChunkReader.Request(key: key, file: manifest, offset: offset, settled: nil, segmentCipher: .chaChaPoly)
            }
            #expect(requests.count >= 2)

            let shared = BroadcastChunkReader(rootPath: root.path, peerCount: 2)
            await shared.beginBatch(0, keys: requests.map(\.key))
            let first = await shared.payloads(for: requests)
            let second = await shared.payloads(for: requests)
            var offset = 0
            var sealedCount = 0
            for (one, other) in zip(first, second) {
                let prepared = try one.get()
                guard prepared.payload.encodedLength >= BroadcastChunkReader.smallestSealedChunk else {
                    // A small last chunk goes through each channel as it is.
                    #expect(prepared.sealedOnce == nil)
                    offset += prepared.payload.encodedLength
                    continue
                }
                sealedCount += 1
                let seal = try #require(prepared.sealedOnce)
                #expect(try other.get().sealedOnce == seal)
                #expect(seal.cipher == .chaChaPoly)
                let opened = try seal.sealed.withUnsafeBytes { try OneTimeSeal.open($0, key: seal.key, cipher: seal.cipher) }
                #expect(opened[...] == bytes[offset..<offset + opened.count])
                #expect(prepared.payload.data == opened[...])
                offset += opened.count
            }
            #expect(offset == bytes.count)
            #expect(sealedCount >= requests.count - 1)
            #expect(await shared.chunksSealed == sealedCount)
            #expect(await shared.diskReads == requests.count)

            let alone = BroadcastChunkReader(rootPath: root.path, peerCount: 1)
            await alone.beginBatch(0, keys: requests.map(\.key))
            for result in await alone.payloads(for: requests) { #expect(try result.get().sealedOnce == nil) }
            let plain = BroadcastChunkReader(rootPath: root.path, peerCount: 2)
            await plain.beginBatch(0, keys: requests.map(\.key))
            let withoutSegments = requests.map { request in
                var request = request
                request.segmentCipher = nil
                return request
            }
            for result in await plain.payloads(for: withoutSegments) { #expect(try result.get().sealedOnce == nil) }
            #expect(await alone.chunksSealed == 0)
            #expect(await plain.chunksSealed == 0)
        }
    }

    /// Reads of every chunk of a 12 MiB video, one request per chunk, for two peers.
    static func videoRequests(in root: URL) async throws -> [BroadcastChunkReader.Request] {
        var generator = SplitMix64(seed: 3)
        let bytes = generator.bytes(12 << 20)
        try TestSupport.write(bytes, to: root.appendingPathComponent("VID_0003.MOV"))
        let scan = try await LibraryScanner(root: root).scan()
        let asset = try #require(scan.assets.first)
        return Self.keys(asset).map { key, offset in
            BroadcastChunkReader.Request(key: key, file: asset.files[0].manifest, offset: offset, settled: nil)
        }
    }

    /// The peer ahead waits for the one behind instead of running past the cache: with a
    /// cache of a sixth of the file, every chunk is still read from disk once.
    @Test(.timeLimit(.minutes(1))) func thePeerAheadWaitsSoEachChunkIsReadOnce() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let requests = try await Self.videoRequests(in: root)
            #expect(requests.count >= 8)
            // On a manual clock that never moves: however slowly this machine runs the peer
            // behind, the one ahead waits for it (no pace deadline can pass meanwhile).
            let reader = BroadcastChunkReader(rootPath: root.path, peerCount: 2, budgetBytes: 2 << 20, clock: ManualClock())
            await reader.beginBatch(0, keys: requests.map(\.key))
            async let fast: Void = { for request in requests { _ = await reader.payloads(for: [request], by: 0) } }()
            async let slow: Void = {
                for request in requests {
                    try? await Task.sleep(for: .milliseconds(20))
                    _ = await reader.payloads(for: [request], by: 1)
                }
            }()
            _ = await (fast, slow)
            #expect(await reader.diskReads == requests.count)
            #expect(await reader.pacingStops == 0)
        }
    }

    /// A peer behind that takes nothing holds the one ahead for `paceWait` once, not for good.
    @Test(.timeLimit(.minutes(1))) func aPeerThatTakesNothingStopsThePacing() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let requests = try await Self.videoRequests(in: root)
            let clock = ManualClock()
            let reader = BroadcastChunkReader(rootPath: root.path, peerCount: 2, budgetBytes: 2 << 20, clock: clock)
            await reader.beginBatch(0, keys: requests.map(\.key))
            let ahead = Task {
                for request in requests { _ = try await reader.payloads(for: [request], by: 0)[0].get() }
            }
            // The peer ahead fills the cache and waits for the one behind, which takes nothing:
            // the wait holds until paceWait has passed, then the pacing stops, once.
            await clock.waitForSleepers(count: 1)
            #expect(await reader.pacingStops == 0)
            clock.advance(by: BroadcastChunkReader.paceWait - .milliseconds(1))
            #expect(await reader.pacingStops == 0, "not a moment before paceWait")
            clock.advance(by: .milliseconds(1))
            try await ahead.value
            #expect(await reader.pacingStops == 1)
            #expect(await reader.diskReads == requests.count)
        }
    }

    /// A chunk the reader compressed (and sealed) once for every peer goes raw, unsealed,
    /// to a peer whose Hello did not announce zstd (PROTOCOL.md, "Chunk compression").
    @Test func aPeerWithoutZstdGetsTheChunkRaw() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let text = [UInt8](String(repeating: "Exif notes, album Holidays 2026; ", count: 4_000).utf8)
            try TestSupport.write(text, to: root.appendingPathComponent("notes.txt"))
            let scan = try await LibraryScanner(root: root).scan()
            let asset = try #require(scan.assets.first)
            let requests = Self.keys(asset).map { key, offset in
                BroadcastChunkReader.Request(key: key, file: asset.files[0].manifest, offset: offset, settled: nil, segmentCipher: .chaChaPoly)
            }
            let reader = BroadcastChunkReader(rootPath: root.path, peerCount: 2)
            await reader.beginBatch(0, keys: requests.map(\.key))
            var restored: [UInt8] = []
            for result in await reader.payloads(for: requests) {
                let prepared = try result.get()
                guard case .zstd = prepared.payload else {
                    Issue.record("a repetitive text chunk should be compressed, got \(prepared.payload.encodingByte)")
                    continue
                }
                #expect(try prepared.forPeer(acceptingZstd: true) == prepared)
                let plain = try prepared.forPeer(acceptingZstd: false)
                #expect(plain.sealedOnce == nil)
                guard case let .raw(bytes) = plain.payload else {
                    Issue.record("a peer without zstd must get the chunk raw")
                    continue
                }
                restored += bytes
            }
            #expect(restored == text)
        }
    }
}
