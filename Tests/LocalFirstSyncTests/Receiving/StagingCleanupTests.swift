import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import LFSyncFixtures
@testable import LocalFirstSync
@testable import LFSyncContent
@testable import LFSyncStore
@testable import LFSyncLanding

/// Partials no transfer holds are removed after a day without a touch, or least recently
/// touched first beyond the size limit or when an offer needs the room; a transfer in
/// progress never loses its partial, and a recent one still resumes. The clock is passed in
/// and file times are set in the past: nothing here sleeps.
@Suite("Receiving: staging clean-up")
struct StagingCleanupTests {
    typealias F = ReceivingFixtures

    static let hourNs: Int64 = 3600 * 1_000_000_000

    /// A half-received file: the first of two 32 KiB chunks written, then the transfer dropped.
    struct Left {
        let bytes: [UInt8]
        let manifest: FileManifest
        let url: URL
        var name: String { url.lastPathComponent }
    }

    static func leavePartial(in setup: F.Setup, staging: StagingArea? = nil, seed: UInt64) throws -> Left {
        let bytes = F.data(64 << 10, seed: seed)
        let manifest = F.manifest(bytes, chunkLengths: [32 << 10, 32 << 10])
        do {
            let file = try IncomingFile.prepare(in: staging ?? setup.staging, manifest: manifest)
            try file.write(chunkAt: 0, bytes: F.chunk(0, of: bytes, manifest))
        }
        let url = setup.stagingURL.appendingPathComponent(manifest.fileHash.hex + ".partial")
        return Left(bytes: bytes, manifest: manifest, url: url)
    }

    /// Sets a file's mtime `hours` before `now` (what the clean-up reads as "last touched").
    static func touch(_ url: URL, hoursBefore now: Int64, _ hours: Int64) throws {
        let seconds = Double(now - hours * hourNs) / 1e9
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: seconds)], ofItemAtPath: url.path)
    }

    static func allocated(_ url: URL) throws -> UInt64 {
        var raw = stat()
        guard lstat(url.path, &raw) == 0 else { throw CocoaError(.fileNoSuchFile) }
        return UInt64(raw.st_blocks) * 512
    }

    static func exists(_ url: URL) -> Bool { FileManager.default.fileExists(atPath: url.path) }

    /// Receives the chunk `leavePartial` did not write, finishes, installs at `name` and
    /// checks the library has exactly the file.
    static func complete(_ file: IncomingFile, _ left: Left, as name: String, in setup: F.Setup) throws {
        try file.write(chunkAt: 1, bytes: F.chunk(1, of: left.bytes, left.manifest))
        try F.installAndCheck(try file.verify(), left.bytes, at: name, in: setup)
    }

    @Test func partialsIdleForADayGoUnlessATransferHoldsThem() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            let now = LibraryScanner.wallClockNs()
            let stale = try Self.leavePartial(in: setup, seed: 1)
            try Self.touch(stale.url, hoursBefore: now, 25)
            let recent = try Self.leavePartial(in: setup, seed: 2)
            try Self.touch(recent.url, hoursBefore: now, 23)
            let held = try Self.leavePartial(in: setup, seed: 3)
            let holder = try IncomingFile.prepare(in: setup.staging, manifest: held.manifest)
            try Self.touch(held.url, hoursBefore: now, 48)
            // A staged file with its placement's mtime of 2001: not the clean-up's business.
            let photo = F.data(1000, seed: 4)
            let staged = try F.stage(photo, F.manifest(photo, chunkLengths: [1000], mtimeNs: 1_000_000_000_000_000_000), in: setup.staging)

            let removal = try setup.staging.removeUnusedPartials(now: now, keepingAtMost: .max)
            #expect(removal.files == 1)
            #expect(removal.bytes > 0)
            #expect(F.contents(of: setup.stagingURL) == [recent.name, held.name, staged.name].sorted())

            // A day on, the one touched 23 hours ago goes too; the held one still stays.
            #expect(try setup.staging.removeUnusedPartials(now: now + 2 * Self.hourNs, keepingAtMost: .max).files == 1)
            #expect(F.contents(of: setup.stagingURL) == [held.name, staged.name].sorted())

            try Self.complete(holder, held, as: "held.bin", in: setup)
        }
    }

    @Test func beyondTheLimitTheLeastRecentlyTouchedGoFirst() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            let now = LibraryScanner.wallClockNs()
            let held = try Self.leavePartial(in: setup, seed: 10)
            let holder = try IncomingFile.prepare(in: setup.staging, manifest: held.manifest)
            try Self.touch(held.url, hoursBefore: now, 4)
            let oldest = try Self.leavePartial(in: setup, seed: 11)
            try Self.touch(oldest.url, hoursBefore: now, 3)
            let older = try Self.leavePartial(in: setup, seed: 12)
            try Self.touch(older.url, hoursBefore: now, 2)
            let newest = try Self.leavePartial(in: setup, seed: 13)
            try Self.touch(newest.url, hoursBefore: now, 1)
            let size = try Self.allocated(newest.url)
            try #require(size > 0)

            // Room for one and a half: the two least recently touched unheld partials go.
            let removal = try setup.staging.removeUnusedPartials(now: now, keepingAtMost: size + size / 2)
            #expect(removal.files == 2)
            #expect(F.contents(of: setup.stagingURL) == [held.name, newest.name].sorted())
            #expect(holder.presentChunks.indices == [0])
        }
    }

    /// An offer that does not fit may take the room of unheld partials — only when that makes
    /// it fit, least recently touched first — and must leave the reserve free.
    @Test func anOfferTakesTheRoomOfUnheldPartialsOnlyWhenThatMakesItFit() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            let now = LibraryScanner.wallClockNs()
            let older = try Self.leavePartial(in: setup, seed: 20)
            try Self.touch(older.url, hoursBefore: now, 2)
            let newer = try Self.leavePartial(in: setup, seed: 21)
            try Self.touch(newer.url, hoursBefore: now, 1)
            let (olderSize, newerSize) = (try Self.allocated(older.url), try Self.allocated(newer.url))
            try #require(olderSize > 0 && newerSize > 0)
            // A 100 MiB file system whose free room grows by what the partials gave back.
            let total: UInt64 = 100 << 20
            let reserve = StagingPolicy.reserve(fileSystemBytes: total)
            #expect(reserve == 1 << 20, "1% of the file system")
            let spare: UInt64 = 100 << 10
            let base = reserve + spare + olderSize + newerSize
            let measure = { () throws(ReceiveError) -> LibraryDirectory.Space in
                let left = [older.url, newer.url].filter(Self.exists).reduce(UInt64(0)) { $0 + ((try? Self.allocated($1)) ?? 0) }
                return LibraryDirectory.Space(available: base - left, total: total)
            }

            try setup.staging.makeRoom(for: spare, now: now, measuring: measure)
            #expect(Self.exists(older.url) && Self.exists(newer.url), "it fitted: nothing removed")

            let tooBig = spare + olderSize + newerSize + 1
            #expect(throws: ReceiveError.insufficientSpace(needed: tooBig, available: base - olderSize - newerSize, reserved: reserve)) {
                try setup.staging.makeRoom(for: tooBig, now: now, measuring: measure)
            }
            #expect(Self.exists(older.url) && Self.exists(newer.url), "no partial is lost for an offer refused anyway")

            try setup.staging.makeRoom(for: spare + olderSize, now: now, measuring: measure)
            #expect(!Self.exists(older.url))
            #expect(Self.exists(newer.url))

            // Nothing to add: never refused, even with less than the reserve free.
            try setup.staging.makeRoom(for: 0, now: now, measuring: { () throws(ReceiveError) in .init(available: 0, total: total) })
            #expect(throws: ReceiveError.insufficientSpace(needed: 1, available: reserve, reserved: reserve)) {
                try setup.staging.makeRoom(for: 1, now: now, measuring: { () throws(ReceiveError) in .init(available: reserve, total: total) })
            }
        }
    }

    /// The importer cleans up when it opens and at each plan; a plan resumes the partial it
    /// needs — however long it lay there — while other stale ones go.
    @Test func aPlanResumesItsPartialWhileTheCleanUpRemovesOthers() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            let now = LibraryScanner.wallClockNs()
            let leftBeforeOpening = try Self.leavePartial(in: setup, seed: 30)
            try Self.touch(leftBeforeOpening.url, hoursBefore: now, 30)
            let importer = try LibraryImporter(library: setup.library, chunkIndex: nil, scanCache: nil, now: { now })
            #expect(!Self.exists(leftBeforeOpening.url), "removed when the importer opened")

            let other = try Self.leavePartial(in: setup, staging: importer.staging, seed: 31)
            try Self.touch(other.url, hoursBefore: now, 30)
            let wanted = try Self.leavePartial(in: setup, staging: importer.staging, seed: 32)
            try Self.touch(wanted.url, hoursBefore: now, 30)
            let asset = try #require(PlacedAsset(placements: [Asset(files: [.init(role: .primary, manifest: wanted.manifest)])]))
            let prepared = try importer.prepare([asset], known: [])
            #expect(!Self.exists(other.url), "the plan's clean-up removed the other stale partial")
            let file = try #require(prepared.files[wanted.manifest.fileHash])
            #expect(file.presentChunks.indices == [0], "resumed: only the second chunk is asked for")
            #expect(prepared.plan.missing[wanted.manifest.fileHash]?.indices == [1])

            try Self.complete(file, wanted, as: "IMG_0001.HEIC", in: setup)
        }
    }

    /// Issue 47: a receiver with room for part of an offer takes the assets that fit, in
    /// offer order, and refuses the others one by one; a later offer does not count on
    /// room promised to the earlier one's chunks still to come.
    @Test func anOfferTooLargeForTheDiskTakesTheAssetsThatFit() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            let now = LibraryScanner.wallClockNs()
            let importer = try LibraryImporter(library: setup.library, chunkIndex: nil, scanCache: nil, now: { now })
            let total: UInt64 = 100 << 20
            let room: UInt64 = 150 << 10
            let measure = { () throws(ReceiveError) -> LibraryDirectory.Space in
                .init(available: StagingPolicy.reserve(fileSystemBytes: total) + room, total: total)
            }
            func photo(_ seed: UInt64) throws -> PlacedAsset {
                let bytes = F.data(64 << 10, seed: seed)
                let manifest = F.manifest(bytes, chunkLengths: [32 << 10, 32 << 10], path: "IMG_\(seed).HEIC")
                return try #require(PlacedAsset(placements: [Asset(files: [.init(role: .primary, manifest: manifest)])]))
            }
            let (a, b, c, d) = (try photo(1), try photo(2), try photo(3), try photo(4))
            do {
                let prepared = try importer.prepare([a, b, c], known: [], leavingToSync: nil, measuring: measure)
                #expect(Set(prepared.plan.refused.keys) == [c.contentID], "two of 64 KiB fit in 150 KiB, the third does not")
                #expect(prepared.plan.refused[c.contentID]?.description.contains("not enough free space") == true)
                #expect(Set(prepared.files.keys) == Set([a, b].map(\.files[0].manifest.fileHash)))
                #expect(importer.staging.promisedSpace.total == 128 << 10)
                // The next offer sees the room already promised: its one asset does not fit.
                #expect(throws: ReceiveError.self) {
                    try importer.prepare([d], known: [], leavingToSync: nil, measuring: measure)
                }
                // A chunk written gives its promise back.
                let file = try #require(prepared.files[a.files[0].manifest.fileHash])
                let bytes = F.data(64 << 10, seed: 1)
                try file.write(chunkAt: 0, bytes: F.chunk(0, of: bytes, a.files[0].manifest))
                #expect(importer.staging.promisedSpace.total == 96 << 10)
            }
            // The transfers gone, so are their promises: the offer fits again.
            #expect(importer.staging.promisedSpace.total == 0)
            let later = try importer.prepare([d], known: [], leavingToSync: nil, measuring: measure)
            #expect(later.plan.refused.isEmpty)
        }
    }

    /// Adopting a partial counts as touching it: a transfer that looked at it and went
    /// (a declined plan, a cancel) gives it another day.
    @Test func adoptingAPartialTouchesIt() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            let now = LibraryScanner.wallClockNs()
            let left = try Self.leavePartial(in: setup, seed: 40)
            try Self.touch(left.url, hoursBefore: now, 30)
            #expect(try IncomingFile.prepare(in: setup.staging, manifest: left.manifest).presentChunks.indices == [0])
            #expect(try setup.staging.removeUnusedPartials(now: now, keepingAtMost: .max).files == 0)
            #expect(Self.exists(left.url))
        }
    }

    /// A staged file a crash left has its placement's mtime (2001 here); recovered as a partial
    /// it is aged from when it was staged.
    @Test func aRecoveredStagedFileIsAgedFromWhenItWasStaged() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            let bytes = F.data(5000, seed: 41)
            let manifest = F.manifest(bytes, chunkLengths: [2500, 2500], mtimeNs: 1_000_000_000_000_000_000)
            _ = try F.stage(bytes, manifest, in: setup.staging)
            let restarted = try StagingArea(library: try LibraryDirectory(path: setup.library.path))
            #expect(try restarted.recoverInterruptedFiles() == 1)
            let now = LibraryScanner.wallClockNs()
            #expect(try restarted.removeUnusedPartials(now: now, keepingAtMost: .max).files == 0)
            #expect(try restarted.partialFileHashes() == [manifest.fileHash])
            #expect(try restarted.removeUnusedPartials(now: now + 25 * Self.hourNs, keepingAtMost: .max).files == 1)
            #expect(try restarted.partialFileHashes().isEmpty)
        }
    }

    @Test func removingAPartialLeavesOneATransferHoldsAlone() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            let left = try Self.leavePartial(in: setup, seed: 50)
            var holder: IncomingFile? = try IncomingFile.prepare(in: setup.staging, manifest: left.manifest)
            #expect(holder?.presentChunks.indices == [0])
            #expect(try !setup.staging.removePartial(fileHash: left.manifest.fileHash))
            #expect(Self.exists(left.url))
            holder = nil
            #expect(try setup.staging.removePartial(fileHash: left.manifest.fileHash))
            #expect(!Self.exists(left.url))
        }
    }
}
