import Foundation
import Testing
@testable import LocalFirstSync
@testable import LFSyncStore

@Suite("State database")
struct StateDatabaseTests {
    @Test func storesShareOneConnectionSafelyAcrossTasks() async throws {
        let state = try StateDatabase.inMemory()
        let ledger = state.syncState
        let cache = try state.scanCache(forLibrary: "/photos")
        await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for round in 0..<50 {
                        let number = worker * 1_000 + round
                        try ledger.record(.synced, for: [StoreFixtures.contentID(number)], peer: PeerKey("peer\(worker % 2)"))
                        try cache.store(StoreFixtures.manifest(path: "w\(worker)/f\(round)", chunkSeeds: [number]), inode: 1)
                        _ = try ledger.counts(for: "peer0")
                    }
                }
            }
        }
        #expect(try ledger.counts(for: "peer0")[.synced] == 200)
        #expect(try ledger.counts(for: "peer1")[.synced] == 200)
        #expect(try cache.loadAll().count == 400)
    }

    @Test func closedDatabaseThrowsClosed() throws {
        let state = try StateDatabase.inMemory()
        let cache = try state.scanCache(forLibrary: "/photos")
        state.close()
        #expect(throws: SQLiteError.closed) { try cache.loadAll() }
        #expect(throws: SQLiteError.closed) { try state.syncState.peers() }
        #expect(throws: SQLiteError.closed) { try state.chunkIndex(forLibrary: "/photos") }
    }

    @Test func onDiskCreatesPrivateDirectoriesAndAWALFile() async throws {
        try await TestSupport.withTemporaryDirectory { directory in
            let stateDirectory = directory.appendingPathComponent("a/b")
            let url = stateDirectory.appendingPathComponent("lfsync.sqlite")
            let state = try StateDatabase.onDisk(url)
            try state.syncState.record(.pending, for: [StoreFixtures.contentID(1)], peer: "nas")
            #expect(FileManager.default.fileExists(atPath: url.path))
            #expect(FileManager.default.fileExists(atPath: url.path + "-wal"))
            let permissions = try FileManager.default.attributesOfItem(atPath: stateDirectory.path)[.posixPermissions] as? Int
            #expect(permissions == 0o700)
            let mode = try state.database.withDatabase { db throws(SQLiteError) in try db.journalMode() }
            #expect(mode == "wal")
        }
    }

    @Test func unwritableLocationIsTyped() async throws {
        try await TestSupport.withTemporaryDirectory { directory in
            // A regular file where a directory should be.
            let blocker = directory.appendingPathComponent("file")
            try Data("x".utf8).write(to: blocker)
            let error = #expect(throws: SQLiteError.self) {
                try StateDatabase.onDisk(blocker.appendingPathComponent("sub/lfsync.sqlite"))
            }
            guard case .cannotOpen = error else {
                Issue.record("expected .cannotOpen, got \(String(describing: error))")
                return
            }
        }
    }

    @Test func errorsReadWellForHumans() {
        #expect(SQLiteError.schemaTooNew(found: 4, supported: 1).description.contains("upgrade lfsync"))
        #expect(SQLiteError(code: 5, message: "database is locked") == .busy(message: "database is locked"))
        #expect(SQLiteError(code: 2067, message: "UNIQUE constraint failed") == .constraint(message: "UNIQUE constraint failed"))
        #expect(SQLiteError(code: 26, message: "file is not a database").resultCode == 11)
        #expect(SQLiteError(code: 7, message: "out of memory") == .other(code: 7, message: "out of memory"))
    }
}

@Suite("Library index")
struct LibraryIndexTests {
    @Test func perLibraryFileHoldsCacheAndChunksAcrossReopen() async throws {
        try await TestSupport.withTemporaryDirectory { directory in
            let url = directory.appendingPathComponent("libraries/0123456789abcdef.sqlite")
            let manifest = StoreFixtures.manifest(path: "IMG_0001.HEIC", chunkSeeds: [1, 2])
            do {
                let index = try LibraryIndex.open(at: url)
                try index.scanCache.store(manifest, inode: 42)
                try index.chunkIndex.record(fileManifest: manifest, inode: 42)
                index.close()
                #expect(throws: SQLiteError.closed) { try index.chunkIndex.indexedFiles() }
            }
            let reopened = try LibraryIndex.open(at: url)
            #expect(try reopened.scanCache.cachedManifest(
                path: manifest.path, size: manifest.size, mtimeNs: manifest.modificationTimeNs, inode: 42) == manifest)
            #expect(try reopened.chunkIndex.locations(of: StoreFixtures.hash(2)).map(\.offset) == [65_536])
        }
    }

    @Test func sharedDatabaseKeepsLibrariesApart() throws {
        let state = try StateDatabase.inMemory()
        let photos = try state.libraryIndex(forLibrary: "/photos")
        let other = try state.libraryIndex(forLibrary: "/other")
        try photos.chunkIndex.record(fileManifest: StoreFixtures.manifest(path: "a", chunkSeeds: [7]), inode: 1)
        #expect(try other.chunkIndex.locations(of: StoreFixtures.hash(7)).isEmpty)
        #expect(try LibraryIndex.inMemory().scanCache.loadAll().isEmpty)
    }
}
