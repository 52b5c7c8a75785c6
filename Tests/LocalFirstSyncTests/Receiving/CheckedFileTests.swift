import Foundation
import Testing
@testable import LFSyncContent
@testable import LFSyncCrypto
@testable import LFSyncStore
@testable import LFSyncLanding
@testable import LFSyncSystem

/// The one rule for acting on a file (`CheckedFile`): lfsync deletes or replaces a file only
/// if, at that moment, it is still the file that was checked — inode, size, modification
/// *and change* time — seen on the open file, its name still leading to it. An edit that
/// puts the modification time back is the case that size-and-time checks miss.
@Suite struct CheckedFileTests {
    typealias Fixtures = ReceivingFixtures

    /// A photo in the library, and what a check of it now records.
    static func photo(_ setup: Fixtures.Setup, name: String = "IMG_0001.HEIC", seed: UInt64 = 1) throws -> (url: URL, checked: CheckedFile) {
        let url = setup.library.appendingPathComponent(name)
        try Fixtures.write(Fixtures.data(10_000, seed: seed), to: url)
        return (url, CheckedFile(path: try Fixtures.path(name), status: try Fixtures.status(url)))
    }

    @Test func anUnchangedFileIsRemoved() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try Fixtures.setUp(in: root)
            let (url, checked) = try Self.photo(setup)
            #expect(try setup.directory.remove(checked) == .removed(stillLinked: nil))
            #expect(!FileManager.default.fileExists(atPath: url.path))
        }
    }

    /// The review's finding: one byte changed and the modification time restored, after the
    /// check. Size and time match; only the change time tells.
    @Test func anEditThatPutItsTimeBackIsNotRemoved() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try Fixtures.setUp(in: root)
            let (url, checked) = try Self.photo(setup)
            var edited = Fixtures.data(10_000, seed: 1)
            edited[5_000] ^= 0x01
            // The change time has a tick of its own: make sure the edit lands after the check's.
            try await Task.sleep(for: .milliseconds(20))
            try TestSupport.overwriteKeepingMtime(url, with: edited)
            let now = try Fixtures.status(url)
            #expect(now.size == checked.size && now.modificationTimeNs == checked.modificationTimeNs && now.inode == checked.inode)
            #expect(try setup.directory.remove(checked) == .left(.changedInPlace))
            #expect(try Fixtures.read(url) == edited)
        }
    }

    @Test func anotherFileRenamedOverTheNameIsNotRemoved() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try Fixtures.setUp(in: root)
            let (url, checked) = try Self.photo(setup)
            let other = setup.library.appendingPathComponent("other.tmp")
            try Fixtures.write(Fixtures.data(10_000, seed: 1), to: other)
            #expect(rename(other.path, url.path) == 0)
            #expect(try setup.directory.remove(checked) == .left(.replaced))
            #expect(try Fixtures.read(url) == Fixtures.data(10_000, seed: 1))
        }
    }

    @Test func aSymlinkSwappedInIsNeitherFollowedNorRemoved() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try Fixtures.setUp(in: root)
            let (url, checked) = try Self.photo(setup)
            let target = setup.outside.appendingPathComponent("precious")
            try Fixtures.write([1, 2, 3], to: target)
            try FileManager.default.removeItem(at: url)
            try Fixtures.symlink(url, to: target)
            #expect(try setup.directory.remove(checked) == .left(.replaced))
            #expect(try Fixtures.read(target) == [1, 2, 3])
            #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: url.path)) == target.path)
        }
    }

    @Test func aFileGoneOrGrownIsSaidSo() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try Fixtures.setUp(in: root)
            let (url, checked) = try Self.photo(setup)
            let handle = try FileHandle(forWritingTo: url)
            try handle.seekToEnd()
            try handle.write(contentsOf: [9])
            try handle.close()
            #expect(try setup.directory.remove(checked) == .left(.resized))
            try FileManager.default.removeItem(at: url)
            #expect(try setup.directory.remove(checked) == .left(.gone))
            // A folder of the path gone is "gone" too, not an error.
            let inFolder = CheckedFile(path: try Fixtures.path("Gone/IMG_2.HEIC"), inode: checked.inode, size: checked.size,
                                       modificationTimeNs: checked.modificationTimeNs, changeTimeNs: checked.changeTimeNs)
            #expect(try setup.directory.remove(inFolder) == .left(.gone))
        }
    }

    /// Two names of one inode (a hard link, as photo libraries have): removing the first moves
    /// the inode's change time, which is lfsync's own doing, not an edit — the second is
    /// removed by the status the first removal left; an edit after it is still seen.
    @Test func aHardLinkIsRemovedAfterItsOtherNameAndAnEditAfterThatIsSeen() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try Fixtures.setUp(in: root)
            let (first, _) = try Self.photo(setup, name: "IMG_0001.HEIC")
            let second = setup.library.appendingPathComponent("Backup/IMG_0001.HEIC")
            try FileManager.default.createDirectory(at: second.deletingLastPathComponent(), withIntermediateDirectories: true)
            #expect(link(first.path, second.path) == 0)
            let firstChecked = CheckedFile(path: try Fixtures.path("IMG_0001.HEIC"), status: try Fixtures.status(first))
            let secondChecked = CheckedFile(path: try Fixtures.path("Backup/IMG_0001.HEIC"), status: try Fixtures.status(second))
            try await Task.sleep(for: .milliseconds(20))
            guard case let .removed(stillLinked?) = try setup.directory.remove(firstChecked) else {
                Issue.record("the first name was not removed, or its inode's other name not reported")
                return
            }
            #expect(secondChecked.change(to: try Fixtures.status(second)) == .changedInPlace, "the unlink moves the change time")
            let adjusted = secondChecked.afterUnlinkOfAnotherName(stillLinked)
            #expect(adjusted.change(to: try Fixtures.status(second)) == nil)
            try await Task.sleep(for: .milliseconds(20))
            try TestSupport.overwriteKeepingMtime(second, with: Fixtures.data(10_000, seed: 9))
            #expect(try setup.directory.remove(adjusted) == .left(.changedInPlace))
            #expect(FileManager.default.fileExists(atPath: second.path))
        }
    }

    /// A check recorded in an earlier run has no device: device numbers change across mounts.
    @Test func aCheckFromAnEarlierRunIgnoresTheDeviceNumber() throws {
        var status = FileStatus(stat())
        (status.kind, status.size, status.inode, status.device, status.modificationTimeNs, status.changeTimeNs) = (.regular, 5, 7, 1, 10, 20)
        let path = try Fixtures.path("a")
        let earlier = CheckedFile(path: path, inode: 7, size: 5, modificationTimeNs: 10, changeTimeNs: 20)
        let thisRun = CheckedFile(path: path, status: status)
        status.device = 2
        #expect(earlier.change(to: status) == nil)
        #expect(thisRun.change(to: status) == .replaced)
        status.changeTimeNs = 21
        #expect(earlier.change(to: status) == .changedInPlace)
    }

    /// Repair's act: the staged copy takes the checked file's place in one exchange and the
    /// replaced file is kept; a file edited since is left alone and the copy discarded.
    @Test func aReplacementKeepsWhatItReplacedAndLeavesAnEditedFileAlone() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try Fixtures.setUp(in: root)
            let (url, checked) = try Self.photo(setup, name: "DCIM/IMG_0002.HEIC", seed: 2)
            let repaired = Fixtures.data(10_000, seed: 3)
            let manifest = Fixtures.manifest(repaired, chunkLengths: [4_000, 6_000], path: "DCIM/IMG_0002.HEIC")
            let staged = try Fixtures.stage(repaired, manifest, in: setup.staging)
            let keep = try KeptCopies.place(for: checked.path, area: KeptCopies.damagedArea, stamp: "run-1", in: setup.directory)
            #expect(try staged.replace(checked, keepingReplacedAt: keep) == nil)
            #expect(try Fixtures.read(url) == repaired)
            let kept = setup.library.appendingPathComponent(KeptCopies.displayPath(of: "DCIM/IMG_0002.HEIC", area: KeptCopies.damagedArea, stamp: "run-1"))
            #expect(try Fixtures.read(kept) == Fixtures.data(10_000, seed: 2))
            #expect(try Fixtures.status(kept).inode == checked.inode)

            // The same again, but the file is edited (time put back) before the act.
            let (second, secondChecked) = try Self.photo(setup, name: "DCIM/IMG_0003.HEIC", seed: 4)
            var edited = Fixtures.data(10_000, seed: 4)
            edited[0] ^= 0xff
            try await Task.sleep(for: .milliseconds(20))
            try TestSupport.overwriteKeepingMtime(second, with: edited)
            let other = try Fixtures.stage(repaired, Fixtures.manifest(repaired, chunkLengths: [10_000], path: "DCIM/IMG_0003.HEIC"), in: setup.staging)
            let keepSecond = try KeptCopies.place(for: secondChecked.path, area: KeptCopies.damagedArea, stamp: "run-1", in: setup.directory)
            #expect(try other.replace(secondChecked, keepingReplacedAt: keepSecond) == .changedInPlace)
            #expect(try Fixtures.read(second) == edited)
            #expect(Fixtures.contents(of: setup.stagingURL).isEmpty, "the unused copy was discarded")
        }
    }

    /// A restore never takes a name something has.
    @Test func aPlacementNeverReplacesAnything() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try Fixtures.setUp(in: root)
            let bytes = Fixtures.data(3_000, seed: 5)
            let manifest = Fixtures.manifest(bytes, chunkLengths: [3_000], path: "Notes/todo.txt")
            #expect(try Fixtures.stage(bytes, manifest, in: setup.staging).place(at: try Fixtures.path("Notes/todo.txt")) == .renamed)
            #expect(try Fixtures.read(setup.library.appendingPathComponent("Notes/todo.txt")) == bytes)
            let mine = setup.library.appendingPathComponent("Notes/mine.txt")
            try Fixtures.write([7], to: mine)
            #expect(try Fixtures.stage(bytes, manifest, in: setup.staging).place(at: try Fixtures.path("Notes/mine.txt")) == .destinationExists)
            #expect(try Fixtures.read(mine) == [7])
        }
    }
}
