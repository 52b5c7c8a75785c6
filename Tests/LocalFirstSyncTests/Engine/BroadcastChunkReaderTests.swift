import Foundation
import Testing
@testable import LocalFirstSync
@testable import LFSyncContent
import LFSyncWire

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
                    let payload = try a.get()
                    #expect(try b.get() == payload)
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
}
