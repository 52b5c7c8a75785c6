import Dispatch
import Foundation
import Synchronization
import Testing
@testable import LFSyncFixtures
@testable import LocalFirstSync
@testable import LFSyncContent
@testable import LFSyncCrypto
@testable import LFSyncStore

/// Two transfers of one content in one process, from different threads (two
/// peers' sessions, or a session and the install queue finishing the other):
/// the partial's lock decides who goes first, and the "shared" mark lives in
/// lfsync's memory, not in mode bits a NAS mount may drop.
@Suite("Receiving: a partial shared by two transfers", .timeLimit(.minutes(1)))
struct SharedPartialTests {
    typealias F = ReceivingFixtures

    /// What happened, in the order it happened, across threads.
    final class Events: Sendable {
        private let list = Mutex<[String]>([])
        func append(_ event: String) { list.withLock { $0.append(event) } }
        var all: [String] { list.withLock { $0 } }
    }

    /// Two operations on one partial from two threads. The first runs on the test's thread
    /// and, at its hook inside the partial's lock, calls `start`: the contender runs on another
    /// thread, and the hook returns once the contender waits for the lock — or, were there no
    /// lock, has already returned. No sleeping: the lock itself reports that it is waited for.
    final class Race<Value: Sendable>: Sendable {
        let events = Events()
        private let gate = DispatchSemaphore(value: 0)
        private let finished = DispatchSemaphore(value: 0)
        private let outcome = Mutex<Result<Value, ReceiveError>?>(nil)
        private let staging: StagingArea
        private let fileHash: Hash256

        /// Watches the lock of `fileHash`'s partial (held for as long as the race lives).
        init(in staging: StagingArea, of fileHash: Hash256, contender: String) {
            (self.staging, self.fileHash) = (staging, fileHash)
            staging.partialLocks.acquire(fileHash).onContentionForTesting { [events, gate] in
                events.append("\(contender) waits")
                gate.signal()
            }
        }

        deinit {
            staging.partialLocks.release(fileHash)
        }

        func start(_ contender: String, _ body: @escaping @Sendable () -> Result<Value, ReceiveError>) {
            DispatchQueue.global().async { [self] in
                let result = body()
                outcome.withLock { $0 = result }
                events.append("\(contender) returned")
                finished.signal()
                gate.signal()
            }
            if gate.wait(timeout: .now() + 30) == .timedOut { events.append("timed out") }
        }

        /// What the contender returned, once it has.
        func contenderResult() -> Result<Value, ReceiveError>? {
            if finished.wait(timeout: .now() + 30) == .timedOut { Issue.record("the contender never returned") }
            return outcome.withLock { $0 }
        }
    }

    /// An honest transfer with every chunk written, and a second offer of the same file hash
    /// whose manifest puts a chunk of garbage (passing its own chunk hash) where chunk 2 goes.
    struct Rivals {
        let bytes: [UInt8]
        let manifest: FileManifest
        let honest: IncomingFile
        let liar: IncomingFile
        let garbage: [UInt8]
    }

    static func rivals(_ staging: StagingArea, seed: UInt64) throws -> Rivals {
        let (bytes, manifest) = F.threeChunks(seed: seed)
        let honest = try IncomingFile.prepare(in: staging, manifest: manifest)
        try honest.writeReceived(chunkAt: 0, bytes: F.chunk(0, of: bytes, manifest))
        try honest.writeReceived(chunkAt: 1, bytes: F.chunk(1, of: bytes, manifest))
        let garbage = F.data(4000, seed: seed + 1)
        let lie = FileManifest(path: "lie", size: 12_000, modificationTimeNs: 0, fileHash: manifest.fileHash,
                               chunks: [manifest.chunks[0], manifest.chunks[1], ChunkRef(length: 4000, hash: Blake2b.hash(garbage))])
        let liar = try IncomingFile.prepare(in: staging, manifest: lie)
        #expect(liar.presentChunks.indices == [0, 1])
        try honest.writeReceived(chunkAt: 2, bytes: F.chunk(2, of: bytes, manifest))
        return Rivals(bytes: bytes, manifest: manifest, honest: honest, liar: liar, garbage: garbage)
    }

    /// The race of issue 14: a write whose ownership check passed before a finish must not land
    /// after that finish has read the file back. Here the write has passed its check and is
    /// about to store when the other transfer finishes: the finish waits for it, then reads back
    /// what it wrote, and refuses the file. (Without the lock the finish would vouch for the
    /// honest bytes and the garbage would land in the staged file afterwards.)
    @Test func aFinishWaitsForAWriteInProgressAndReadsBackWhatItWrote() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            let rivals = try Self.rivals(setup.staging, seed: 50)
            let race = Race<StagedFile>(in: setup.staging, of: rivals.manifest.fileHash, contender: "finish")
            let honest = HandedOver(rivals.honest)
            rivals.liar.testHookBeforeStore = {
                race.events.append("write checked")
                race.start("finish") { Result { () throws(ReceiveError) in try honest.value.verify() } }
            }
            try rivals.liar.writeReceived(chunkAt: 2, bytes: rivals.garbage)
            race.events.append("write returned")
            let outcome = race.contenderResult()

            // Once the write has released the partial, the two threads go on in either order.
            #expect(race.events.all.prefix(2) == ["write checked", "finish waits"])
            #expect(Set(race.events.all) == ["write checked", "finish waits", "write returned", "finish returned"])
            let garbled = Array(rivals.bytes[0..<8000]) + rivals.garbage
            switch outcome {
            case let .failure(.fileHashMismatch(expected, actual))?:
                #expect(expected == rivals.manifest.fileHash)
                #expect(actual == Blake2b.hash(garbled), "the finish read back the garbage and refused it")
            case let other:
                Issue.record("finish: \(String(describing: other))")
            }
            #expect(F.contents(of: setup.stagingURL).isEmpty, "the refused file is deleted")
        }
    }

    /// The other order: once a finish holds the partial, a write of the other transfer waits,
    /// then finds the partial taken — it cannot land in the file the finish has verified.
    @Test func aWriteWaitsForAFinishInProgressThenFindsThePartialTaken() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            let rivals = try Self.rivals(setup.staging, seed: 60)
            let race = Race<Void>(in: setup.staging, of: rivals.manifest.fileHash, contender: "write")
            let (liar, garbage) = (HandedOver(rivals.liar), rivals.garbage)
            rivals.honest.testHookInFinish = {
                race.events.append("finish verified")
                race.start("write") { Result { () throws(ReceiveError) in try liar.value.writeReceived(chunkAt: 2, bytes: garbage) } }
            }
            let staged = try rivals.honest.verify()
            let outcome = race.contenderResult()

            #expect(race.events.all == ["finish verified", "write waits", "write returned"])
            switch outcome {
            case let .failure(.partialTaken(fileHash))?: #expect(fileHash == rivals.manifest.fileHash)
            case let other: Issue.record("write: \(String(describing: other))")
            }
            try F.installAndCheck(staged, rivals.bytes, at: "IMG_0001.HEIC", in: setup)
        }
    }

    /// A partial its creator has to itself keeps the one-hash-per-byte path whatever mode it
    /// shows (vfat shows every file 0755), and still lands exactly. (The other way round — a
    /// shared partial whose mode was changed is still read back — is
    /// `IncomingFileTests.lyingManifestSharingThePartialCannotSlipAWrongFileThrough`.)
    @Test(arguments: [0o644, 0o755, 0o1600] as [Int])
    func anUnsharedPartialWhoseModeChangedKeepsTheFastPath(mode: Int) async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            let (bytes, manifest) = F.threeChunks(seed: 74)
            let file = try IncomingFile.prepare(in: setup.staging, manifest: manifest)
            // Chunk 0 is written verified: only chunks 1 and 2, written after the mode changed,
            // decide whether the fast (unverified) path was kept.
            try file.write(chunkAt: 0, bytes: F.chunk(0, of: bytes, manifest))
            let partial = setup.stagingURL.appendingPathComponent(manifest.fileHash.hex + ".partial")
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: partial.path)
            try file.writeReceived(chunkAt: 1, bytes: F.chunk(1, of: bytes, manifest))
            try file.writeReceived(chunkAt: 2, bytes: F.chunk(2, of: bytes, manifest))
            let staged = try file.verify()
            #expect(!staged.chunkListVerified, "chunks were not hashed one by one: the file hash alone proved them")
            try F.installAndCheck(staged, bytes, at: "IMG_0002.HEIC", in: setup)
        }
    }

    /// A partial removed and made again (the name now leads to another file, which the file
    /// system may even give the same inode number) belongs to its new creator only.
    @Test func aTransferOfAnEarlierPartialCannotWriteIntoItsSuccessor() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            let (bytes, manifest) = F.threeChunks(seed: 75)
            let first = try IncomingFile.prepare(in: setup.staging, manifest: manifest)
            try first.write(chunkAt: 0, bytes: F.chunk(0, of: bytes, manifest))
            let second = try IncomingFile.prepare(in: setup.staging, manifest: manifest)
            try second.write(chunkAt: 1, bytes: F.chunk(1, of: bytes, manifest))
            try second.write(chunkAt: 2, bytes: F.chunk(2, of: bytes, manifest))
            try second.verify().discard()  // finished, then given up: its inode is free again
            let third = try IncomingFile.prepare(in: setup.staging, manifest: manifest)
            try third.writeReceived(chunkAt: 0, bytes: F.chunk(0, of: bytes, manifest))
            #expect(throws: ReceiveError.partialTaken(fileHash: manifest.fileHash)) {
                try first.write(chunkAt: 1, bytes: F.chunk(1, of: bytes, manifest))
            }
            try third.writeReceived(chunkAt: 1, bytes: F.chunk(1, of: bytes, manifest))
            try third.writeReceived(chunkAt: 2, bytes: F.chunk(2, of: bytes, manifest))
            #expect(try !third.verify().chunkListVerified, "still its creator's own partial")
        }
    }
}
