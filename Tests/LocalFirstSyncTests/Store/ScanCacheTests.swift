import Foundation
import Testing
@testable import LocalFirstSync
@testable import LFSyncContent
@testable import LFSyncStore
import LFSyncSystem
import LFSyncCrypto
import LFSyncTransport
import LFSyncTCP
import LFSyncDiscovery
import LFSyncWire

@Suite("Scan cache")
struct ScanCacheTests {
    let root = "/photos"

    @Test func hitOnlyWhenEveryFieldMatches() throws {
        let cache = try StateDatabase.inMemory().scanCache(forLibrary: root)
        let manifest = StoreFixtures.manifest(path: "2024/IMG_0001.HEIC", chunkSeeds: [1, 2, 3])
        let (size, mtime, inode): (UInt64, Int64, UInt64) = (manifest.size, manifest.modificationTimeNs, 9_000_000_001)
        #expect(try cache.cachedManifest(path: manifest.path, size: size, mtimeNs: mtime, inode: inode) == nil)

        try cache.store(manifest, inode: inode)
        #expect(try cache.cachedManifest(path: manifest.path, size: size, mtimeNs: mtime, inode: inode) == manifest)
        #expect(try cache.cachedManifest(path: manifest.path, stamp: FileStamp(size: size, modificationTimeNs: mtime, inode: inode)) == manifest)

        #expect(try cache.cachedManifest(path: "2024/IMG_0002.HEIC", size: size, mtimeNs: mtime, inode: inode) == nil)
        #expect(try cache.cachedManifest(path: manifest.path, size: size + 1, mtimeNs: mtime, inode: inode) == nil)
        #expect(try cache.cachedManifest(path: manifest.path, size: size, mtimeNs: mtime + 1, inode: inode) == nil)
        #expect(try cache.cachedManifest(path: manifest.path, size: size, mtimeNs: mtime, inode: inode + 1) == nil)
    }

    @Test func storeReplacesTheEntryForAPath() throws {
        let cache = try StateDatabase.inMemory().scanCache(forLibrary: root)
        let old = StoreFixtures.manifest(path: "a.jpg", chunkSeeds: [1], mtimeNs: 1)
        let new = StoreFixtures.manifest(path: "a.jpg", chunkSeeds: [2, 3], mtimeNs: 2)
        try cache.store(old, inode: 5)
        try cache.store(new, inode: 6)
        #expect(try cache.cachedManifest(path: "a.jpg", size: old.size, mtimeNs: 1, inode: 5) == nil)
        #expect(try cache.cachedManifest(path: "a.jpg", size: new.size, mtimeNs: 2, inode: 6) == new)
        #expect(try cache.loadAll().count == 1)
    }

    @Test func unsignedExtremesRoundTrip() throws {
        let cache = try StateDatabase.inMemory().scanCache(forLibrary: root)
        let manifest = StoreFixtures.manifest(path: "big", chunkSeeds: [1], mtimeNs: -5)
        try cache.store(manifest, inode: .max)
        #expect(try cache.cachedManifest(path: "big", size: manifest.size, mtimeNs: -5, inode: .max) == manifest)
        #expect(try cache.loadAll()["big"]?.inode == .max)
    }

    @Test func corruptBlobIsAMissNotACrash() throws {
        let state = try StateDatabase.inMemory()
        let cache = try state.scanCache(forLibrary: root)
        let good = StoreFixtures.manifest(path: "good.jpg", chunkSeeds: [1])
        let garbled = StoreFixtures.manifest(path: "garbled.jpg", chunkSeeds: [2])
        let empty = StoreFixtures.manifest(path: "empty.jpg", chunkSeeds: [3])
        let lying = StoreFixtures.manifest(path: "lying.jpg", chunkSeeds: [4])
        try cache.storeAll([good, garbled, empty, lying].map { IndexedFile(manifest: $0, inode: 1) })

        var swapped = StoreFixtures.manifest(path: "someone-else.jpg", chunkSeeds: [4])
        swapped.modificationTimeNs = lying.modificationTimeNs
        let swappedBlob = swapped.encoded()
        try state.database.withDatabase { db throws(SQLiteError) in
            try db.execute("UPDATE scan_cache SET manifest = x'01FFFF00' WHERE path = 'garbled.jpg'")
            try db.execute("UPDATE scan_cache SET manifest = x'' WHERE path = 'empty.jpg'")
            // Decodes fine, but describes another file: must not be served for this path.
            try db.cachedStatement("UPDATE scan_cache SET manifest = ? WHERE path = 'lying.jpg'").execute([.blob(swappedBlob)])
        }

        for manifest in [garbled, empty, lying] {
            #expect(try cache.cachedManifest(path: manifest.path, size: manifest.size, mtimeNs: manifest.modificationTimeNs, inode: 1) == nil)
        }
        #expect(try cache.cachedManifest(path: good.path, size: good.size, mtimeNs: good.modificationTimeNs, inode: 1) == good)
        #expect(try Set(cache.loadAll().keys) == ["good.jpg"])
    }

    @Test func batchRoundTripAndPrune() throws {
        let cache = try StateDatabase.inMemory().scanCache(forLibrary: root)
        let files = (0..<10_000).map { index in
            IndexedFile(manifest: StoreFixtures.manifest(path: "dir\(index % 10)/file\(index).jpg", chunkSeeds: [index, index + 1]),
                        inode: UInt64(index) + 100)
        }
        try cache.storeAll(files)
        let loaded = try cache.loadAll()
        #expect(loaded.count == files.count)
        for file in files {
            #expect(loaded[file.path] == file)
        }

        let keep = Set(files.prefix(2_500).map(\.path))
        #expect(try cache.removeEntries(notIn: keep) == 7_500)
        #expect(try Set(cache.loadAll().keys) == keep)
        #expect(try cache.removeEntries(notIn: keep) == 0)

        try cache.removeEntry(path: files[0].path)
        #expect(try cache.loadAll().count == 2_499)
    }

    /// The receiver's batch lookup: the paths that have an entry, each once, in one read
    /// transaction; inside a caller's transaction it reads that transaction's rows.
    @Test func entriesOfManyPathsInOneRead() throws {
        let state = try StateDatabase.inMemory()
        let cache = try state.scanCache(forLibrary: root)
        let files = (0..<50).map { index in
            IndexedFile(manifest: StoreFixtures.manifest(path: "dir/file\(index).jpg", chunkSeeds: [index]), inode: UInt64(index) + 1)
        }
        try cache.storeAll(files)
        let asked: [RelativePath] = ["dir/file3.jpg", "dir/missing.jpg", "dir/file49.jpg", "dir/file3.jpg", "elsewhere.jpg"]
        let found = try cache.entries(paths: asked)
        #expect(Set(found.keys) == ["dir/file3.jpg", "dir/file49.jpg"])
        #expect(found["dir/file49.jpg"] == files[49])
        #expect(try cache.entries(paths: []).isEmpty)
        // The read transaction ends with the call; alone or inside a caller's transaction.
        try state.database.withDatabase { db throws(SQLiteError) in
            try db.readTransaction { () throws(SQLiteError) in #expect(!db.isAutocommit) }
            #expect(db.isAutocommit)
            try db.transaction { () throws(SQLiteError) in
                try db.execute("DELETE FROM scan_cache WHERE path = 'dir/file3.jpg'")
                let left = try db.readTransaction { () throws(SQLiteError) in
                    try db.prepare("SELECT count(*) FROM scan_cache WHERE path = 'dir/file3.jpg'").firstRow { $0.int64(at: 0) }
                }
                #expect(left == 0)
                #expect(!db.isAutocommit)
            }
            #expect(db.isAutocommit)
        }
        #expect(try cache.entries(paths: asked).keys.sorted() == ["dir/file49.jpg"])
    }

    /// The receiver's in-place lookup reads only the file hash from each stored
    /// manifest, in place: it must agree with the full decode, and a blob that
    /// disagrees with its row (another path, size or mtime), is cut short or has
    /// an unknown version is no answer at all, as it is for `entries(paths:)`.
    @Test func fileHashesAgreeWithTheFullManifestAndRefuseMismatches() throws {
        let state = try StateDatabase.inMemory()
        let cache = try state.scanCache(forLibrary: root)
        let files = (0..<6).map { index in
            IndexedFile(manifest: StoreFixtures.manifest(path: "dir/fïle\(index).jpg", chunkSeeds: [index, index + 9]),
                        inode: UInt64(index) + 1, changeTimeNs: index == 5 ? nil : 1_700_000_000_000_000_000 + Int64(index))
        }
        try cache.storeAll(files)
        let known = try cache.fileHashes(paths: files.map(\.path) + ["dir/missing.jpg"])
        #expect(Set(known.keys) == Set(files.map(\.path)))
        for file in files {
            let entry = try #require(known[file.path])
            #expect(entry.fileHash == file.manifest.fileHash && entry.stamp == file.stamp && entry.changeTimeNs == file.changeTimeNs)
        }
        #expect(try cache.fileHashes(paths: []).isEmpty)

        // Damage four rows: another file's manifest, a size that disagrees, a cut blob, a future version.
        var other = files[1].manifest.encoded()
        var cut = files[2].manifest.encoded()
        cut.removeLast(cut.count - 20)
        var future = files[3].manifest.encoded()
        future[0] = FileManifest.encodingVersion + 1
        try state.database.withDatabase { db throws(SQLiteError) in
            let update = try db.prepare("UPDATE scan_cache SET manifest = ? WHERE path = ?")
            try update.execute([.blob(other), .text(files[0].path.string)])
            try update.execute([.blob(cut), .text(files[2].path.string)])
            try update.execute([.blob(future), .text(files[3].path.string)])
            try db.prepare("UPDATE scan_cache SET size = size + 1 WHERE path = ?").execute([.text(files[4].path.string)])
        }
        other = []
        let damaged = try cache.fileHashes(paths: files.map(\.path))
        #expect(Set(damaged.keys) == [files[1].path, files[5].path])
        #expect(Set(try cache.entries(paths: files.map(\.path)).keys) == Set(damaged.keys))
        // The row vouches for a file that shows its stamp and ctime, and never without a ctime.
        func status(of file: IndexedFile, changeTimeNs: Int64) -> FileStatus {
            var raw = stat()
            raw.st_mode = S_IFREG | 0o644
            raw.st_size = off_t(file.manifest.size)
            raw.st_ino = ino_t(file.inode)
            let mtime = file.manifest.modificationTimeNs
            raw.st_mtim = timespec(tv_sec: Int(mtime / 1_000_000_000), tv_nsec: Int(mtime % 1_000_000_000))
            raw.st_ctim = timespec(tv_sec: Int(changeTimeNs / 1_000_000_000), tv_nsec: Int(changeTimeNs % 1_000_000_000))
            return FileStatus(raw)
        }
        let ctime = try #require(files[1].changeTimeNs)
        #expect(damaged[files[1].path]?.isUnchanged(status(of: files[1], changeTimeNs: ctime)) == true)
        #expect(damaged[files[1].path]?.isUnchanged(status(of: files[1], changeTimeNs: ctime + 1)) == false)
        #expect(damaged[files[5].path]?.isUnchanged(status(of: files[5], changeTimeNs: ctime)) == false)
    }

    @Test func librariesAreSeparate() throws {
        let state = try StateDatabase.inMemory()
        let photos = try state.scanCache(forLibrary: "/photos")
        let documents = try state.scanCache(forLibrary: "/documents")
        let manifest = StoreFixtures.manifest(path: "same-name.jpg", chunkSeeds: [1])
        try photos.store(manifest, inode: 1)
        #expect(try documents.loadAll().isEmpty)
        #expect(try documents.removeEntries(notIn: []) == 0)
        #expect(try photos.loadAll().count == 1)
        // Asking again for the same root gives the same library.
        #expect(try state.scanCache(forLibrary: "/photos").loadAll().count == 1)
    }

    @Test func survivesReopen() async throws {
        try await TestSupport.withTemporaryDirectory { directory in
            let url = directory.appendingPathComponent("state/lfsync.sqlite")
            let manifest = StoreFixtures.manifest(path: "a.jpg", chunkSeeds: [1, 2])
            do {
                let state = try StateDatabase.onDisk(url)
                try state.scanCache(forLibrary: root).store(manifest, inode: 3)
                state.close()
            }
            let reopened = try StateDatabase.onDisk(url)
            #expect(try reopened.scanCache(forLibrary: root).loadAll()["a.jpg"]?.manifest == manifest)
        }
    }
}
