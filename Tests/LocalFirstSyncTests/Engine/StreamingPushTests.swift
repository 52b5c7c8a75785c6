import Foundation
import Synchronization
import Testing
@testable import LFSyncFixtures
@testable import LocalFirstSync
@testable import LFSyncContent
@testable import LFSyncSystem
@testable import LocalFirstSyncTesting

/// A push offered while its library is still being hashed: the scan hands
/// over whole folders in order, the push feeds offers as they come, and a
/// content found again in a later folder still crosses once and is counted
/// synced only when every copy of it is in place.
@Suite(.timeLimit(.minutes(2))) struct StreamingPushTests {
    /// Folders `dir0 … dir{n-1}` of small distinct files, plus copies of one photo far apart.
    static func writeLibrary(at root: URL, folders: Int = 8, filesPerFolder: Int = 3) throws -> [UInt8] {
        var random = SplitMix64(seed: 11)
        for folder in 0..<folders {
            for file in 0..<filesPerFolder {
                try TestSupport.write(random.bytes(2_000 + 37 * file + folder), to: root.appendingPathComponent("dir\(folder)/f\(file).bin"))
            }
        }
        let photo = random.bytes(150_000)
        for path in ["dir0/IMG_1.JPG", "dir\(folders - 1)/IMG_1 copy.JPG", "zz/late/IMG_1.JPG"] {
            try TestSupport.write(photo, to: root.appendingPathComponent(path))
        }
        return photo
    }

    @Test func segmentsAreWholeFoldersInOrderAndAddUpToThePlainScan() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            _ = try Self.writeLibrary(at: root)
            // Settled first: whether a file counts as settled depends on its age when it is
            // hashed, and the two scans below must not straddle that moment (under a loaded
            // machine they did: 0 settled in the first, 27 in the second).
            try await TestSupport.waitForFilesToSettle()
            let plain = try await LibraryScanner(root: root).scan()
            #expect(plain.settledStatus.count == plain.statistics.files)
            let events = Mutex<[String]>([])
            let segments = Mutex<[ScanSegment]>([])
            let streamed = try await LibraryScanner(root: root).scan(
                segmentFiles: 4,
                walked: { files, bytes in events.withLock { $0.append("walked \(files) \(bytes)") } },
                segment: { segment in
                    events.withLock { $0.append("segment") }
                    segments.withLock { $0.append(segment) }
                })
            let delivered = segments.withLock { $0 }
            let log = events.withLock { $0 }
            #expect(log.first == "walked \(plain.statistics.files) \(plain.statistics.bytes)")
            #expect(log.dropFirst().allSatisfy { $0 == "segment" })
            #expect(delivered.count > 2, "a library of 10 folders in segments of about 4 files")
            // No folder is split between segments, and each comes once.
            var seenFolders = Set<RelativePath>()
            for segment in delivered {
                let folders = Set(segment.assets.flatMap { $0.files.map(\.manifest.path.directory) })
                #expect(seenFolders.isDisjoint(with: folders))
                seenFolders.formUnion(folders)
            }
            // The same assets, and the same settled files, as one plain scan.
            let streamedAssets = delivered.flatMap(\.assets).map { "\($0.contentID.hex) \($0.primaryPath)" }.sorted()
            #expect(streamedAssets == plain.assets.map { "\($0.contentID.hex) \($0.primaryPath)" }.sorted())
            #expect(delivered.reduce(0) { $0 + $1.settled.count } == plain.settledStatus.count)
            #expect(streamed.assets.isEmpty && streamed.statistics.files == plain.statistics.files)
        }
    }

    @Test func anOfferIsReadyOnlyOnceItsSuccessorExistsOrTheFeedEnds() async throws {
        let push = OutgoingPush(offerIDs: OfferIDSource())
        push.setTotals(files: 3, bytes: 30)
        let a = try Self.asset("a.bin", [1]), b = try Self.asset("b.bin", [2])
        let copy = try Self.asset("later/a.bin", [1])
        await push.append(ScanSegment(assets: [a], settled: SettledFiles()))
        #expect(!push.isReady(0), "offer 0 cannot say whether it is the last yet")
        await push.append(ScanSegment(assets: [b, copy], settled: SettledFiles()))
        #expect(push.isReady(0) && !push.isReady(1))
        #expect(await push.ready(0))
        #expect(push.offer(0)?.push.isLast == false)
        #expect(push.offer(0)?.push.fileCount == 3)
        // The copy found later is the same content again: marked, so the sender waits for both.
        #expect(push.batch(1)?.repeated == [a.contentID])
        let waiting = Task { await push.ready(1) }
        push.endOfAssets()
        #expect(await waiting.value)
        #expect(push.offer(1)?.push.isLast == true)
        #expect(await push.ready(2) == false)
        #expect(push.contentCount == 2)
        #expect(push.offer(1)?.push.pushID == push.offer(0)?.offerID)
    }

    @Test func aBatchIsDroppedOnceEveryPeerHasGonePastIt() async throws {
        let push = OutgoingPush(offerIDs: OfferIDSource())
        let fast = push.addConsumer(), slow = push.addConsumer()
        await push.append(ScanSegment(assets: [try Self.asset("a.bin", [1])], settled: SettledFiles()))
        await push.append(ScanSegment(assets: [try Self.asset("b.bin", [2])], settled: SettledFiles()))
        push.endOfAssets()
        push.advance(fast, to: 2)
        #expect(push.batch(0) != nil, "the slow peer still needs it")
        push.advance(slow, to: 1)
        #expect(push.batch(0) == nil && push.batch(1) != nil)
        #expect(push.offer(1)?.push.pushID != nil, "the push keeps its ID when its first batch is gone")
        push.advance(slow, to: .max)
        #expect(push.batch(1) == nil && push.batchCount == 2)
    }

    @Test func theFeedWaitsWhileTheSlowestPeerIsTooFarBehind() async throws {
        let push = OutgoingPush(offerIDs: OfferIDSource())
        let held = OutgoingPush.maxHeldBatches
        // No consumer yet: nothing could make room, so nothing waits.
        for index in 0..<held + 2 {
            await push.append(ScanSegment(assets: [try Self.asset("early\(index).bin", [UInt8(index)])], settled: SettledFiles()))
        }
        #expect(push.batchCount == held + 2)
        let peer = push.addConsumer()
        let segment = ScanSegment(assets: [try Self.asset("late.bin", [200])], settled: SettledFiles())
        let feeding = Task { await push.append(segment) }
        try await Task.sleep(for: .milliseconds(50))
        #expect(push.batchCount == held + 2, "the feed waits while the peer holds \(held + 2) batches")
        push.advance(peer, to: 2)
        try await Task.sleep(for: .milliseconds(50))
        #expect(push.batchCount == held + 2, "still \(held) held: one more must go")
        push.advance(peer, to: 3)
        await feeding.value
        #expect(push.batchCount == held + 3)
        #expect(push.batch(held + 2)?.assets.map(\.contentID) == [segment.assets[0].contentID])
    }

    /// Once every peer is done with the push (its connection lost, say) the scan may still
    /// be feeding it: what it feeds then is dropped at once, and the feed never waits.
    @Test func theFeedNeverWaitsForPeersThatAreDone() async throws {
        let push = OutgoingPush(offerIDs: OfferIDSource())
        let peer = push.addConsumer()
        await push.append(ScanSegment(assets: [try Self.asset("first.bin", [0])], settled: SettledFiles()))
        push.advance(peer, to: .max)
        for index in 1...OutgoingPush.maxHeldBatches * 2 {
            await push.append(ScanSegment(assets: [try Self.asset("later\(index).bin", [UInt8(index)])], settled: SettledFiles()))
        }
        #expect(push.batchCount == OutgoingPush.maxHeldBatches * 2 + 1)
        #expect((0..<push.batchCount).allSatisfy { push.batch($0) == nil }, "nobody will read them: none is kept")
    }

    @Test func aPushOfNothingIsOneEmptyLastOffer() async {
        let push = OutgoingPush(offerIDs: OfferIDSource())
        push.endOfAssets()
        #expect(await push.ready(0))
        let offer = push.offer(0)
        #expect(offer?.assets.isEmpty == true && offer?.push.isLast == true)
    }

    @Test func copiesInLaterSegmentsCrossOnceAndAreSyncedOnceEveryCopyIsIn() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let (laptop, receivers) = try await LocalSyncTests.household(root, receivers: 1)
            let nas = receivers[0]
            let photo = try Self.writeLibrary(at: laptop.library, folders: 12)
            let push = try await laptop.sync.push(library: laptop.library, cache: laptop.scanCache, chunkIndex: laptop.chunkIndex,
                                                  segmentFiles: 4)
            let summary = try #require(await push.transfer.waitUntilCompleted().first)
            let scan = try await push.scanned()
            #expect(summary.state == .completed, "\(summary.failures)")
            let assets = try await laptop.scan()
            let contents = Set(assets.map(\.contentID))
            #expect(push.contentCount == contents.count)
            #expect(summary.assetsStored == contents.count, "each content counted once, however many copies")
            #expect(scan.statistics.files == 12 * 3 + 3)
            #expect(try EngineHarness.tree(nas.library) == EngineHarness.tree(laptop.library))
            let distinct = assets.filter { $0.primaryPath.name != "IMG_1 copy.JPG" && $0.primaryPath.directory != "zz/late" }
                .reduce(UInt64(0)) { $0 + $1.totalSize }
            #expect(summary.chunkBytesSent <= distinct, "the photo's copies crossed again: \(summary.chunkBytesSent) > \(distinct)")
            #expect(UInt64(photo.count) < distinct)
            for asset in assets { #expect(try laptop.state(of: asset, for: nas) == .synced) }
        }
    }

    /// A push longer than the feed's bound reaches two accepting peers whole: the scan
    /// waits for the slower of them, never for good.
    @Test func aPushLongerThanTheFeedsBoundReachesEveryPeer() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let (laptop, receivers) = try await LocalSyncTests.household(root, receivers: 2)
            let folders = OutgoingPush.maxHeldBatches * 2
            _ = try Self.writeLibrary(at: laptop.library, folders: folders)
            let push = try await laptop.sync.push(library: laptop.library, cache: laptop.scanCache, chunkIndex: laptop.chunkIndex,
                                                  segmentFiles: 3)
            let summaries = await push.transfer.waitUntilCompleted()
            _ = try await push.scanned()
            #expect(push.push.batchCount > OutgoingPush.maxHeldBatches, "the feed's bound was never reached")
            #expect(summaries.map(\.state) == [.completed, .completed], "\(summaries.map(\.failures))")
            for receiver in receivers {
                #expect(try EngineHarness.tree(receiver.library) == EngineHarness.tree(laptop.library))
            }
        }
    }

    /// A push declined at its first offer ends for that peer, however many batches the scan
    /// has still to feed: the peer lets each go as it counts it, so the feed, which waits
    /// for the slowest peer, is never held by one that has stopped.
    @Test func aDeclinedPushLongerThanTheFeedsBoundStillEnds() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let (laptop, desk) = try await LocalSyncTests.laptopAndAskingPeer(root, named: "desk", decisionTimeout: .seconds(30))
            // One folder per segment: twice as many batches as the feed holds for a peer.
            let folders = OutgoingPush.maxHeldBatches * 2
            _ = try Self.writeLibrary(at: laptop.library, folders: folders)
            let answering = Task {
                for await offer in desk.sync.incomingTransfers() {
                    offer.decline()
                    return
                }
            }
            let push = try await laptop.sync.push(library: laptop.library, cache: laptop.scanCache, chunkIndex: laptop.chunkIndex,
                                                  segmentFiles: 3)
            let summary = try #require(await push.transfer.waitUntilCompleted().first)
            await answering.value
            let scan = try await push.scanned()
            #expect(scan.statistics.files == folders * 3 + 3)
            #expect(push.push.batchCount > OutgoingPush.maxHeldBatches, "the feed's bound was never reached")
            guard case .declined = summary.state else {
                Issue.record("expected declined, got \(summary.state)")
                return
            }
            #expect(summary.assetsFailed == push.push.contentCount, "every content of the push is counted, fed before or after the decline")
            #expect(try EngineHarness.tree(desk.library).isEmpty)
        }
    }

    /// A peer whose connection is lost while the scan is still feeding the push: every content
    /// of the push is counted for it, those fed before the loss and those fed after, so a
    /// summary (and `lfsync push --json`) adds up to the push. It used to count only the
    /// batches that existed when the connection went. Cut late, the photo's first copy is
    /// stored before the link goes and its later copies are not sent: the content counts as
    /// failed, not both stored and failed.
    @Test(arguments: [30_000, 250_000]) func aPeerCutOffWhileTheScanFeedsCountsEveryContent(cutAfter bytes: Int) async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let network = InMemoryNetwork()
            let laptop = try TestDevice(name: "laptop", root: root, transport: network.transport(host: "laptop"))
            let desk = try TestDevice(name: "desk", root: root, transport: network.transport(host: "desk"), trusting: [laptop.identity])
            try await desk.start(host: "desk")
            // The link dies a few files into the push.
            network.setFaults(.cutAfter(bytes: bytes), for: desk.address)
            try await laptop.sync.connect(to: desk.address, expecting: desk.identity.deviceID)
            let folders = OutgoingPush.maxHeldBatches * 2
            _ = try Self.writeLibrary(at: laptop.library, folders: folders)
            let push = try await laptop.sync.push(library: laptop.library, cache: laptop.scanCache, chunkIndex: laptop.chunkIndex,
                                                  segmentFiles: 3)
            let summary = try #require(await push.transfer.waitUntilCompleted().first)
            _ = try await push.scanned()
            guard case .failed = summary.state else {
                Issue.record("expected the cut peer to fail, got \(summary.state)")
                return
            }
            #expect(summary.assetsStored < push.push.contentCount, "the cut came before the end")
            #expect(summary.assetsStored + summary.assetsFailed == push.push.contentCount,
                    "stored \(summary.assetsStored) + failed \(summary.assetsFailed) of \(push.push.contentCount)")
        }
    }

    static func asset(_ path: String, _ bytes: [UInt8]) throws -> Asset {
        Asset(files: [Asset.File(role: .primary, manifest: FileManifest(path: RelativePath(path), contents: bytes))])
    }
}
