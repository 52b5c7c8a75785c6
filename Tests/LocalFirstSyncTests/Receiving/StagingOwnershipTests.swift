import Foundation
import Glibc
import Testing
@testable import LFSyncStore
@testable import LFSyncLanding
@testable import LFSyncSystem

private typealias F = ReceivingFixtures

/// A library another local user can write to (ARCHITECTURE.md, "Receiver safety"): that user must not
/// get to read incoming files or have them written into an inode of theirs.
/// `.lfsync/` or `staging/` owned by someone else is refused with a clear
/// reason; one of ours left open to others is closed again; a partial is
/// resumed only if it is ours and 0600.
@Suite struct StagingOwnershipTests {
    static let isRoot = geteuid() == 0
    /// Some user that is not us.
    static let stranger: uid_t = 4_242

    static func mode(_ url: URL) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int)
    }

    @Test(.enabled(if: isRoot, "makes a directory of another user's with chown, which needs root"),
          arguments: [".lfsync", ".lfsync/staging"])
    func stagingOfAnotherUserIsRefused(_ owned: String) async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let library = root.appendingPathComponent("library")
            try FileManager.default.createDirectory(at: library.appendingPathComponent(".lfsync/staging"), withIntermediateDirectories: true)
            #expect(chown(library.appendingPathComponent(owned).path, Self.stranger, Self.stranger) == 0)
            #expect(chmod(library.appendingPathComponent(owned).path, 0o777) == 0)
            let directory = try LibraryDirectory(path: library.path)
            #expect(throws: ReceiveError.unsafeStaging(path: owned, owner: UInt32(Self.stranger), user: UInt32(geteuid()))) {
                _ = try StagingArea(library: directory)
            }
            let message = ReceiveError.unsafeStaging(path: owned, owner: UInt32(Self.stranger), user: 0).description
            #expect(message.contains("belongs to another user") && message.contains(owned))
        }
    }

    /// Ours, but 0777 (as a careless `mkdir` or a hostile local user's pre-creation left
    /// it while still ours): closed to 0700 before anything is written in it.
    @Test func stagingOpenToOthersIsMadePrivate() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let library = root.appendingPathComponent("library")
            let state = library.appendingPathComponent(".lfsync"), staging = state.appendingPathComponent("staging")
            try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: true)
            #expect(chmod(state.path, 0o777) == 0 && chmod(staging.path, 0o1777) == 0)
            _ = try StagingArea(library: try LibraryDirectory(path: library.path))
            #expect(try Self.mode(state) == 0o700)
            #expect(try Self.mode(staging) == 0o700)
        }
    }

    /// A partial planted under the name an interrupted transfer would resume — readable by
    /// others, or another user's — is not written into: it is replaced by a new file of
    /// ours, 0600, and the transfer starts from nothing.
    @Test(arguments: [0o666, 0o644, 0o640])
    func aPlantedReadablePartialIsNotAdopted(mode: Int) async throws {
        try await Self.expectNotAdopted(mode: mode, strangerOwns: false)
    }

    @Test(.enabled(if: isRoot, "gives the planted partial to another user with chown, which needs root"))
    func aPlantedPartialOfAnotherUserIsNotAdopted() async throws {
        try await Self.expectNotAdopted(mode: 0o600, strangerOwns: true)
    }

    static func expectNotAdopted(mode: Int, strangerOwns: Bool) async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            let bytes = F.data(9000, seed: 50)
            let manifest = F.manifest(bytes, chunkLengths: [3000, 3000, 3000])
            let partial = setup.stagingURL.appendingPathComponent(StagingArea.partialName(for: manifest.fileHash))
            // The planted file even holds the right first chunk, so adopting it would show.
            try F.write(Array(bytes.prefix(3000)) + [UInt8](repeating: 0, count: 6000), to: partial)
            #expect(chmod(partial.path, mode_t(mode)) == 0)
            if strangerOwns { #expect(chown(partial.path, stranger, stranger) == 0) }
            let planted = try FileStatus.of(path: partial.path)
            // Held open, so its inode number is not reused for the file that replaces it.
            let plantedHandle = try FileHandle(forReadingFrom: partial)
            defer { try? plantedHandle.close() }

            let file = try IncomingFile.prepare(in: setup.staging, manifest: manifest)
            #expect(file.presentChunks.count == 0, "nothing of the planted file was taken")
            try file.write(chunkAt: 1, bytes: F.chunk(1, of: bytes, manifest))
            let now = try FileStatus.of(path: partial.path)
            #expect(now.inode != planted.inode, "the incoming bytes went into a file of ours")
            #expect(now.permissions == 0o600 && now.owner == UInt32(geteuid()))
            for index in [0, 2] { try file.write(chunkAt: index, bytes: F.chunk(index, of: bytes, manifest)) }
            #expect(try plantedHandle.readToEnd() == Data(bytes.prefix(3000) + [UInt8](repeating: 0, count: 6000)),
                    "nothing was written into the planted file")
            _ = try file.verify()
        }
    }

    /// Our own interrupted partial, 0600, is still resumed.
    @Test func ourOwnPartialIsStillResumed() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            let bytes = F.data(9000, seed: 51)
            let manifest = F.manifest(bytes, chunkLengths: [3000, 3000, 3000])
            do {
                let file = try IncomingFile.prepare(in: setup.staging, manifest: manifest)
                try file.write(chunkAt: 0, bytes: F.chunk(0, of: bytes, manifest))
            }
            let resumed = try IncomingFile.prepare(in: setup.staging, manifest: manifest)
            #expect(resumed.presentChunks.indices == [0])
        }
    }
}
