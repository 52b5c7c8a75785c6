import Foundation
import Testing
@testable import LocalFirstSync
@testable import LFSyncContent
@testable import LFSyncStore

@Suite("Chunk index")
struct ChunkIndexTests {
    @Test func findsEveryPlaceAChunkLives() throws {
        let index = try StateDatabase.inMemory().chunkIndex(forLibrary: "/photos")
        let a = StoreFixtures.manifest(path: "a.jpg", chunkSeeds: [1, 2, 3], chunkLength: 100)
        let b = StoreFixtures.manifest(path: "b/copy.jpg", chunkSeeds: [9, 2], chunkLength: 100, mtimeNs: 77)
        try index.record(fileManifest: a, inode: 10)
        try index.recordAll([IndexedFile(manifest: b, inode: 11)])

        let stampA = FileStamp(size: 300, modificationTimeNs: a.modificationTimeNs, inode: 10)
        let stampB = FileStamp(size: 200, modificationTimeNs: 77, inode: 11)
        #expect(try index.locations(of: StoreFixtures.hash(2)) == [
            ChunkLocation(path: "a.jpg", offset: 100, length: 100, stamp: stampA),
            ChunkLocation(path: "b/copy.jpg", offset: 100, length: 100, stamp: stampB),
        ])
        #expect(try index.locations(of: StoreFixtures.hash(3)) == [ChunkLocation(path: "a.jpg", offset: 200, length: 100, stamp: stampA)])
        #expect(try index.locations(of: StoreFixtures.hash(2), limit: 1).count == 1)
        #expect(try index.locations(of: StoreFixtures.hash(42)).isEmpty)
        #expect(try index.indexedFiles() == ["a.jpg": stampA, "b/copy.jpg": stampB])

        // The batch lookup a receiver makes for an offer gives the same places, only for chunks that have any.
        let all = try index.locations(ofAll: [2, 3, 42, 2].map(StoreFixtures.hash))
        #expect(Set(all.keys) == [StoreFixtures.hash(2), StoreFixtures.hash(3)])
        #expect(all[StoreFixtures.hash(2)] == (try index.locations(of: StoreFixtures.hash(2))))
        #expect(try index.locations(ofAll: []).isEmpty)
    }

    @Test func offsetsFollowUnequalChunkLengths() throws {
        let index = try StateDatabase.inMemory().chunkIndex(forLibrary: "/l")
        let manifest = FileManifest(
            path: "v.mov", size: 10 + 20 + 30, modificationTimeNs: 0,
            chunks: [ChunkRef(length: 10, hash: StoreFixtures.hash(1)), ChunkRef(length: 20, hash: StoreFixtures.hash(2)),
                     ChunkRef(length: 30, hash: StoreFixtures.hash(3))])
        try index.record(fileManifest: manifest, inode: 1)
        #expect(try index.locations(of: StoreFixtures.hash(3)).map(\.offset) == [30])
        #expect(try index.locations(of: StoreFixtures.hash(3)).map(\.length) == [30])
    }

    @Test func reRecordingReplacesStaleChunks() throws {
        let index = try StateDatabase.inMemory().chunkIndex(forLibrary: "/photos")
        try index.record(fileManifest: StoreFixtures.manifest(path: "a.jpg", chunkSeeds: [1, 2]), inode: 1)
        let edited = StoreFixtures.manifest(path: "a.jpg", chunkSeeds: [1, 5], mtimeNs: 99)
        try index.record(fileManifest: edited, inode: 1)
        #expect(try index.locations(of: StoreFixtures.hash(2)).isEmpty)
        #expect(try index.locations(of: StoreFixtures.hash(5)).map(\.stamp.modificationTimeNs) == [99])
        #expect(try index.locations(of: StoreFixtures.hash(1)).count == 1)
    }

    @Test func removingFilesRemovesTheirChunks() throws {
        let state = try StateDatabase.inMemory()
        let index = try state.chunkIndex(forLibrary: "/photos")
        try index.recordAll((0..<5).map { IndexedFile(manifest: StoreFixtures.manifest(path: "f\($0)", chunkSeeds: [$0, 100]), inode: 1) })
        #expect(try index.locations(of: StoreFixtures.hash(100)).count == 5)

        try index.removeFile(path: "f0")
        #expect(try index.locations(of: StoreFixtures.hash(0)).isEmpty)
        #expect(try index.removeFiles(notIn: ["f1", "f2"]) == 2)
        #expect(try index.locations(of: StoreFixtures.hash(100)).map(\.path) == ["f1", "f2"])
        let orphans = try state.database.withDatabase { db throws(SQLiteError) in
            try db.prepare("SELECT count(*) FROM chunk_location").firstRow { $0.int64(at: 0) }
        }
        #expect(orphans == 4, "cascade removed the chunk rows of removed files")
    }

    @Test func librariesAreSeparate() throws {
        let state = try StateDatabase.inMemory()
        try state.chunkIndex(forLibrary: "/a").record(fileManifest: StoreFixtures.manifest(path: "x", chunkSeeds: [1]), inode: 1)
        #expect(try state.chunkIndex(forLibrary: "/b").locations(of: StoreFixtures.hash(1)).isEmpty)
        #expect(try state.chunkIndex(forLibrary: "/a").locations(of: StoreFixtures.hash(1)).count == 1)
    }

    @Test func meaninglessRowsAreSkipped() throws {
        let state = try StateDatabase.inMemory()
        let index = try state.chunkIndex(forLibrary: "/photos")
        try index.record(fileManifest: StoreFixtures.manifest(path: "a", chunkSeeds: [1, 2]), inode: 1)
        try state.database.withDatabase { db throws(SQLiteError) in
            try db.execute("UPDATE chunk_location SET length = -1 WHERE byte_offset = 0")
            try db.execute("UPDATE chunk_location SET length = 'lots' WHERE byte_offset > 0")
        }
        #expect(try index.locations(of: StoreFixtures.hash(1)).isEmpty)
        #expect(try index.locations(of: StoreFixtures.hash(2)).isEmpty)
    }
}
