import Dispatch
import Foundation
import Synchronization
import Testing
@testable import LFSyncFixtures
@testable import LocalFirstSync
@testable import LFSyncContent
@testable import LFSyncCrypto
@testable import LFSyncStore
@testable import LFSyncLanding

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

    /// A transfer with every chunk written, and a second transfer of the same content
    /// (another peer offering the same file) that shares its partial. A file hash is made
    /// from the chunk list, so the two have one chunk list: all they can write is the same
    /// verified bytes. What the lock keeps apart is a write and a finish: a write landing
    /// after the finish would change a file already handed to the installer.
    struct Rivals {
        let bytes: [UInt8]
        let manifest: FileManifest
        let first: IncomingFile
        let second: IncomingFile
    }

    static func rivals(_ staging: StagingArea, seed: UInt64) throws -> Rivals {
        let (bytes, manifest) = F.threeChunks(seed: seed)
        let first = try IncomingFile.prepare(in: staging, manifest: manifest)
        try first.write(chunkAt: 0, bytes: F.chunk(0, of: bytes, manifest))
        try first.write(chunkAt: 1, bytes: F.chunk(1, of: bytes, manifest))
        var other = manifest
        other.path = "copy"
        let second = try IncomingFile.prepare(in: staging, manifest: other)
        #expect(second.presentChunks.indices == [0, 1])
        try first.write(chunkAt: 2, bytes: F.chunk(2, of: bytes, manifest))
        return Rivals(bytes: bytes, manifest: manifest, first: first, second: second)
    }

    /// The race of issue 14: a write whose ownership check passed before a finish must not land
    /// after that finish. Here the write has passed its check and is about to store when the
    /// other transfer finishes: the finish waits for it, and only then renames the partial.
    @Test func aFinishWaitsForAWriteInProgress() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            let rivals = try Self.rivals(setup.staging, seed: 50)
            let race = Race<StagedFile>(in: setup.staging, of: rivals.manifest.fileHash, contender: "finish")
            let first = HandedOver(rivals.first)
            rivals.second.testHookBeforeStore = {
                race.events.append("write checked")
                race.start("finish") { Result { () throws(ReceiveError) in try first.value.verify() } }
            }
            try rivals.second.write(chunkAt: 2, bytes: F.chunk(2, of: rivals.bytes, rivals.manifest))
            race.events.append("write returned")
            let outcome = race.contenderResult()

            // Once the write has released the partial, the two threads go on in either order.
            #expect(race.events.all.prefix(2) == ["write checked", "finish waits"])
            #expect(Set(race.events.all) == ["write checked", "finish waits", "write returned", "finish returned"])
            switch outcome {
            case let .success(staged)?: try F.installAndCheck(staged, rivals.bytes, at: "IMG_0001.HEIC", in: setup)
            case let other: Issue.record("finish: \(String(describing: other))")
            }
        }
    }

    /// The other order: once a finish holds the partial, a write of the other transfer waits,
    /// then finds the partial taken — it cannot land in the file the finish has verified.
    @Test func aWriteWaitsForAFinishInProgressThenFindsThePartialTaken() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try F.setUp(in: root)
            let rivals = try Self.rivals(setup.staging, seed: 60)
            let race = Race<Void>(in: setup.staging, of: rivals.manifest.fileHash, contender: "write")
            let (second, chunk) = (HandedOver(rivals.second), F.chunk(2, of: rivals.bytes, rivals.manifest))
            rivals.first.testHookInFinish = {
                race.events.append("finish verified")
                race.start("write") { Result { () throws(ReceiveError) in try second.value.write(chunkAt: 2, bytes: chunk) } }
            }
            let staged = try rivals.first.verify()
            let outcome = race.contenderResult()

            #expect(race.events.all == ["finish verified", "write waits", "write returned"])
            switch outcome {
            case let .failure(.partialTaken(fileHash))?: #expect(fileHash == rivals.manifest.fileHash)
            case let other: Issue.record("write: \(String(describing: other))")
            }
            try F.installAndCheck(staged, rivals.bytes, at: "IMG_0001.HEIC", in: setup)
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
            try third.write(chunkAt: 0, bytes: F.chunk(0, of: bytes, manifest))
            #expect(throws: ReceiveError.partialTaken(fileHash: manifest.fileHash)) {
                try first.write(chunkAt: 1, bytes: F.chunk(1, of: bytes, manifest))
            }
            try third.write(chunkAt: 1, bytes: F.chunk(1, of: bytes, manifest))
            try third.write(chunkAt: 2, bytes: F.chunk(2, of: bytes, manifest))
            try F.installAndCheck(try third.verify(), bytes, at: "IMG_0003.HEIC", in: setup)
        }
    }
}
