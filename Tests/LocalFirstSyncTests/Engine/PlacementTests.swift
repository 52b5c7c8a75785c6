import Foundation
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import LFSyncFixtures
@testable import LocalFirstSync
@testable import LFSyncContent
@testable import LFSyncCrypto
@testable import LFSyncStore
@testable import LFSyncLanding
@testable import LFSyncSystem
@testable import LocalFirstSyncTesting

/// The engine with libraries shaped like real ones (over the in-memory
/// network): copies of one content, presets shared by many photos and empty
/// files land at every path while their bytes cross once; the receiver holds
/// no descriptor per file; and the ledger keeps telling the truth.
@Suite(.timeLimit(.minutes(2))) struct PlacementTests {
    static func household(_ root: URL, receivers: Int = 1) async throws -> (TestDevice, [TestDevice]) {
        try await LocalSyncTests.household(root, receivers: receivers)
    }

    /// Descriptors this process has open right now (on files inside `directory`, when given:
    /// other tests of the process open files of their own meanwhile).
    static func openDescriptors(under directory: URL? = nil) -> Int {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        guard let prefix = directory.map({ $0.standardizedFileURL.path + "/" }) else { return entries.count }
        return entries.filter { entry in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + entry))?.hasPrefix(prefix) == true
        }.count
    }

    @Test func copiesSharedSidecarsAndEmptyFilesLandEverywhereAndCrossOnce() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let (laptop, receivers) = try await Self.household(root)
            let nas = receivers[0]
            var random = SplitMix64(seed: 7)
            let photo = random.bytes(300_000)
            let preset = Array("<plist><key>adjustment</key><string>vivid warm</string></plist>".utf8)
            for index in 0..<30 {
                try TestSupport.write(random.bytes(20_000 + index), to: laptop.library.appendingPathComponent("Trip/IMG_\(index).HEIC"))
                try TestSupport.write(preset, to: laptop.library.appendingPathComponent("Trip/IMG_\(index).AAE"))
            }
            for path in ["a.jpg", "Exports/a.jpg", "Backup/2024/a.jpg", "Backup/2024/a copy.jpg"] {
                try TestSupport.write(photo, to: laptop.library.appendingPathComponent(path))
            }
            for path in ["empty.txt", "notes/empty.txt", "notes/.nomedia"] {
                try TestSupport.write([], to: laptop.library.appendingPathComponent(path))
            }
            let assets = try await laptop.scan()
            let contents = Set(assets.map(\.contentID))
            #expect(assets.count == 30 + 4 + 3 && contents.count == 30 + 1 + 1)

            let summary = try #require(await laptop.sync.send(assets, from: laptop.library).waitUntilCompleted().first)
            #expect(summary.state == .completed, "\(summary.failures)")
            #expect(summary.assetsStored == contents.count)
            #expect(try EngineHarness.tree(nas.library) == EngineHarness.tree(laptop.library))
            // Bytes cross once: the photo once, the preset once, the 30 stills once each.
            let distinct = UInt64(photo.count + preset.count) + (0..<30).reduce(UInt64(0)) { $0 + UInt64(20_000 + $1) }
            #expect(summary.chunkBytesSent <= distinct, "sent \(summary.chunkBytesSent) for \(distinct) distinct bytes")
            // Copies are independent files (never hard links), each with its own inode.
            let inodes = try ["a.jpg", "Exports/a.jpg", "Backup/2024/a.jpg", "Backup/2024/a copy.jpg"].map {
                try FileStatus.of(path: nas.library.appendingPathComponent($0).path).inode
            }
            #expect(Set(inodes).count == 4)
            #expect(try FileManager.default.contentsOfDirectory(atPath: nas.library.appendingPathComponent(".lfsync/staging").path).isEmpty)
            // Every content is synced in the ledger, on both sides.
            for asset in assets {
                #expect(try laptop.state(of: asset, for: nas) == .synced)
                #expect(try nas.state(of: asset, for: laptop) == .synced)
            }
            // The receiver's scan cache knows every copy: a repeat moves nothing.
            let again = try #require(await laptop.sync.send(try await laptop.scan(), from: laptop.library).waitUntilCompleted().first)
            #expect(again.state == .completed && again.chunkBytesSent == 0)
        }
    }

    @Test func theReceiverHoldsNoDescriptorPerFile() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let (laptop, receivers) = try await Self.household(root)
            let nas = receivers[0]
            var random = SplitMix64(seed: 8)
            for index in 0..<1_500 {
                try TestSupport.write(random.bytes(1_000 + index % 3_000), to: laptop.library.appendingPathComponent("d\(index % 20)/f\(index).bin"))
            }
            let assets = try await laptop.scan()
            let staging = nas.library.appendingPathComponent(".lfsync/staging")
            // The probe sees a staging file held open (so a receiver holding one per file would show).
            try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: true)
            let probe = open(staging.appendingPathComponent("probe").path, O_RDWR | O_CREAT, 0o600)
            #expect(Self.openDescriptors(under: staging) == 1)
            close(probe)
            unlink(staging.appendingPathComponent("probe").path)
            let peak = Mutex(0)
            let sampler = Task {
                while !Task.isCancelled {
                    let now = Self.openDescriptors(under: staging)
                    peak.withLock { $0 = max($0, now) }
                    try? await Task.sleep(for: .milliseconds(1))
                }
            }
            let summary = try #require(await laptop.sync.send(assets, from: laptop.library).waitUntilCompleted().first)
            sampler.cancel()
            #expect(summary.state == .completed)
            #expect(summary.assetsStored == 1_500)
            // A partial is open only while a chunk is written, a file verified or copied: a few
            // at once at most, nothing like one per file of the push.
            let most = peak.withLock { $0 }
            #expect(most <= 4, "\(most) staging files open at once for a push of 1,500 files")
            #expect(try EngineHarness.tree(nas.library).count == 1_500)
        }
    }

    @Test func incomingFilesHoldNoDescriptorBetweenOperations() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let setup = try ReceivingFixtures.setUp(in: root)
            var files: [IncomingFile] = []
            for index in 0..<400 {
                let bytes = ReceivingFixtures.data(2_000, seed: UInt64(index))
                let manifest = ReceivingFixtures.manifest(bytes, chunkLengths: [1_000, 1_000])
                let file = try IncomingFile.prepare(in: setup.staging, manifest: manifest)
                try file.write(chunkAt: 0, bytes: ReceivingFixtures.chunk(0, of: bytes, manifest))
                files.append(file)
            }
            #expect(Self.openDescriptors(under: setup.stagingURL) == 0, "400 half-received files, no descriptor kept")
            #expect(try FileManager.default.contentsOfDirectory(atPath: setup.stagingURL.path).count == 400)
            #expect(files.allSatisfy { $0.presentChunks.count == 1 })
        }
    }

    @Test func aDeclinedPushNeverUndoesWhatThePeerVerified() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            // Trusts the laptop to connect, not to push unasked, and nobody answers: offers are declined.
            let (laptop, nas) = try await LocalSyncTests.laptopAndAskingPeer(root, named: "nas", decisionTimeout: .milliseconds(200))
            try EngineHarness.writeSample(at: laptop.library, padding: 20_000)
            let assets = try await laptop.scan()
            // What the nas verified earlier (say, before its owner stopped auto-accepting).
            let key = PeerKey(rawValue: nas.identity.deviceID.description)
            try laptop.store.recordSynced(assets.map { ($0.contentID, $0.totalSize) }, peer: key)
            try TestSupport.write(Array("new".utf8), to: laptop.library.appendingPathComponent("new.txt"))
            let more = try await laptop.scan()

            let summary = try #require(await laptop.sync.send(more, from: laptop.library).waitUntilCompleted().first)
            guard case .declined = summary.state else { Issue.record("expected a decline, got \(summary.state)"); return }
            for asset in assets { #expect(try laptop.state(of: asset, for: nas) == .synced, "a decline undid a true synced") }
            let new = try #require(more.first { $0.primaryPath == "new.txt" })
            #expect(try laptop.state(of: new, for: nas) == .failed)
            #expect(try laptop.store.failureReason(of: new.contentID, for: key)?.contains("declined") == true)
        }
    }

    @Test func recordingAFailureLeavesSyncedRowsAlone() throws {
        let store = try SyncStateStore.inMemory()
        let peer = PeerKey(rawValue: "NAS")
        let synced = ContentID(hash: Blake2b.hash([1])), pending = ContentID(hash: Blake2b.hash([2]))
        try store.recordSynced([(synced, 10)], peer: peer)
        try store.record(.inFlight, for: [synced, pending], peer: peer, unlessSynced: true)
        #expect(try store.state(of: synced, for: peer) == .synced)
        #expect(try store.state(of: pending, for: peer) == .inFlight)
        try store.record(.failed, for: [synced, pending], peer: peer, reason: "unreachable", unlessSynced: true)
        #expect(try store.state(of: synced, for: peer) == .synced)
        #expect(try store.failureReason(of: pending, for: peer) == "unreachable")
        // Without the guard, a row says what it is told (a later verified failure, say).
        try store.record(.failed, for: [synced], peer: peer, reason: "explicit")
        #expect(try store.state(of: synced, for: peer) == .failed)
    }

    @Test func namingAPeerTwiceSendsOnce() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let (laptop, receivers) = try await Self.household(root)
            try EngineHarness.writeSample(at: laptop.library, padding: 20_000)
            let peer = try #require(await laptop.sync.connectedPeers.first)
            let summaries = await laptop.sync.send(try await laptop.scan(), from: laptop.library, to: .peers([peer, peer])).waitUntilCompleted()
            #expect(summaries.count == 1)
            #expect(summaries.first?.state == .completed)
            #expect(try EngineHarness.tree(receivers[0].library) == EngineHarness.tree(laptop.library))
        }
    }
}
