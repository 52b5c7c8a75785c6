import Foundation
import Testing
@testable import LocalFirstSync
@testable import LFSyncContent

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
}
