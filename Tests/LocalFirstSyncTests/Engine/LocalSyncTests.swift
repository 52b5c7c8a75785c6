import Foundation
import Synchronization
import Testing
@testable import LFSyncFixtures
@testable import LocalFirstSync
@testable import LFSyncContent
@testable import LFSyncCrypto
@testable import LFSyncStore
@testable import LocalFirstSyncTesting

/// The engine over the deterministic in-memory network: consent, multi-peer
/// broadcast with independent progress, the ledger, resume, hostile offers.
@Suite(.timeLimit(.minutes(2))) struct LocalSyncTests {
    /// A sender and `count` receivers that trust it (connections and offers), all started and connected.
    static func household(_ root: URL, receivers: Int, network: InMemoryNetwork = InMemoryNetwork()) async throws -> (TestDevice, [TestDevice]) {
        let sender = try TestDevice(name: "laptop", root: root, transport: network.transport(host: "laptop"))
        var others: [TestDevice] = []
        for index in 0..<receivers {
            let device = try TestDevice(name: "device-\(index)", root: root, transport: network.transport(host: "device-\(index)"), trusting: [sender.identity])
            try await device.start(host: "device-\(index)")
            try await sender.sync.connect(to: device.address, expecting: device.identity.deviceID)
            others.append(device)
        }
        return (sender, others)
    }

    /// A laptop and a peer that trusts it to connect but asks a person about every offer:
    /// whoever reads the peer's `incomingTransfers()` answers, or the offer is declined
    /// after `decisionTimeout`. Connected.
    static func laptopAndAskingPeer(_ root: URL, named name: String, decisionTimeout: Duration) async throws -> (TestDevice, TestDevice) {
        let network = InMemoryNetwork()
        let laptop = try TestDevice(name: "laptop", root: root, transport: network.transport(host: "laptop"))
        let peer = try TestDevice(name: name, root: root, transport: network.transport(host: name), trusting: [laptop.identity],
                                  autoAcceptOffers: false, decisionTimeout: decisionTimeout)
        try await peer.start(host: name)
        try await laptop.sync.connect(to: peer.address, expecting: peer.identity.deviceID)
        return (laptop, peer)
    }

    @Test func twoPeersByteExactWithLedgerOnBothSides() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let (laptop, receivers) = try await Self.household(root, receivers: 1)
            let nas = receivers[0]
            try EngineHarness.writeSample(at: laptop.library)
            let assets = try await laptop.scan()
            let transfer = await laptop.sync.send(assets, from: laptop.library)
            let summaries = await transfer.waitUntilCompleted()
            #expect(summaries.map(\.state) == [.completed])
            #expect(summaries.first?.assetsStored == assets.count)
            #expect(try EngineHarness.tree(nas.library) == EngineHarness.tree(laptop.library))
            for asset in assets {
                #expect(try laptop.state(of: asset, for: nas) == .synced)
                #expect(try nas.state(of: asset, for: laptop) == .synced)
            }
            // What arrived is already in the receiver's scan cache: its next scan hashes nothing,
            // and Live Photo pairs still pair (their identifiers were cached too).
            let rescan = try await LibraryScanner(root: nas.library, cache: nas.scanCache).scan()
            #expect(rescan.statistics.filesHashed == 0)
            #expect(rescan.assets.map(\.contentID).sorted() == assets.map(\.contentID).sorted())
            // Staging is left empty once everything has landed.
            let staging = nas.library.appendingPathComponent(".lfsync/staging")
            #expect((try? FileManager.default.contentsOfDirectory(atPath: staging.path))?.isEmpty ?? true)
        }
    }

    @Test func threePeerBroadcastHasIndependentProgressAndReadsOnce() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let (laptop, receivers) = try await Self.household(root, receivers: 3)
            try EngineHarness.writeSample(at: laptop.library)
            let assets = try await laptop.scan()
            let transfer = await laptop.sync.send(assets, from: laptop.library)
            var perPeer: [String: [TransferUpdate]] = [:]
            for await update in transfer { perPeer[update.peer.name, default: []].append(update) }
            let summaries = await transfer.waitUntilCompleted()
            #expect(summaries.count == 3)
            #expect(summaries.allSatisfy { $0.state == .completed })
            #expect(Set(perPeer.keys) == ["device-0", "device-1", "device-2"])
            for (_, updates) in perPeer {
                let done = updates.map(\.progress.bytesDone)
                #expect(done == done.sorted(), "progress of one peer never goes backwards")
                #expect(updates.last?.progress.fractionCompleted == 1)
            }
            for device in receivers {
                #expect(try EngineHarness.tree(device.library) == EngineHarness.tree(laptop.library))
                for asset in assets { #expect(try laptop.state(of: asset, for: device) == .synced) }
            }
        }
    }

    @Test func repeatedAndRenamedPushesMoveAlmostNothing() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let (laptop, receivers) = try await Self.household(root, receivers: 1)
            try EngineHarness.writeSample(at: laptop.library)
            let first = await laptop.sync.send(try await laptop.scan(), from: laptop.library).waitUntilCompleted()
            #expect(first.first?.chunkBytesSent ?? 0 > 1_000_000)
            let again = await laptop.sync.send(try await laptop.scan(), from: laptop.library).waitUntilCompleted()
            #expect(again.first?.state == .completed)
            #expect(again.first?.chunkBytesSent == 0)
            // Rename every folder on the sender: the receiver copies every chunk from what it already has.
            try FileManager.default.moveItem(at: laptop.library.appendingPathComponent("DCIM"), to: laptop.library.appendingPathComponent("Phone"))
            try FileManager.default.moveItem(at: laptop.library.appendingPathComponent("Camera"), to: laptop.library.appendingPathComponent("Nikon"))
            let renamed = await laptop.sync.send(try await laptop.scan(), from: laptop.library).waitUntilCompleted()
            #expect(renamed.first?.state == .completed)
            #expect(renamed.first?.chunkBytesSent == 0)
            let nas = receivers[0]
            #expect(FileManager.default.fileExists(atPath: nas.library.appendingPathComponent("Phone/100APPLE/IMG_0001.HEIC").path))
        }
    }

    @Test func cutPeerFailsAloneThenResumesWithOnlyMissingChunks() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let network = InMemoryNetwork()
            let laptop = try TestDevice(name: "laptop", root: root, transport: network.transport(host: "laptop"))
            var devices: [TestDevice] = []
            for name in ["good-1", "flaky", "good-2"] {
                let device = try TestDevice(name: name, root: root, transport: network.transport(host: name), trusting: [laptop.identity])
                try await device.start(host: name)
                devices.append(device)
            }
            let flaky = devices[1]
            // The flaky device's link dies after ~3 MB of the ~30 MB it would receive.
            network.setFaults(.cutAfter(bytes: 3_000_000), for: flaky.address)
            for device in devices { try await laptop.sync.connect(to: device.address, expecting: device.identity.deviceID) }
            try EngineHarness.writeSample(at: laptop.library, padding: 1_000_000)
            let assets = try await laptop.scan()
            let total = assets.reduce(UInt64(0)) { $0 + $1.totalSize }
            let summaries = await laptop.sync.send(assets, from: laptop.library).waitUntilCompleted()
            let byName = Dictionary(uniqueKeysWithValues: summaries.map { ($0.peer.name, $0) })
            #expect(byName["good-1"]?.state == .completed)
            #expect(byName["good-2"]?.state == .completed)
            guard case .failed? = byName["flaky"]?.state else {
                Issue.record("the cut peer should have failed: \(String(describing: byName["flaky"]))")
                return
            }
            for asset in assets {
                #expect(try laptop.state(of: asset, for: devices[0]) == .synced)
                #expect(try laptop.state(of: asset, for: devices[2]) == .synced)
            }
            // An asset lands whole or not at all: never half a Live Photo.
            for asset in assets {
                let landed = asset.files.map { FileManager.default.fileExists(atPath: flaky.library.appendingPathComponent($0.manifest.path.string).path) }
                #expect(Set(landed).count == 1, "\(asset.files.map(\.manifest.path)) landed partially: \(landed)")
            }
            let flakyStates = try assets.map { try laptop.state(of: $0, for: flaky) }
            #expect(flakyStates.contains(.failed))
            #expect(try laptop.store.failureReason(of: assets[0].contentID, for: PeerKey(rawValue: flaky.identity.deviceID.description)) != nil)

            // Link restored: the second push sends only what did not arrive, measured on the
            // receiver's disk without its code.
            let missing = try EngineHarness.missingChunkBytes(of: assets, in: flaky.library)
            #expect(missing > 0 && missing < total)
            network.removeFaults(for: flaky.address)
            try await laptop.sync.connect(to: flaky.address, expecting: flaky.identity.deviceID)
            let resumed = await laptop.sync.send(assets, from: laptop.library, to: .peers([Peer(deviceID: flaky.identity.deviceID, name: "flaky")])).waitUntilCompleted()
            #expect(resumed.first?.state == .completed)
            let firstAttempt = byName["flaky"]?.chunkBytesSent ?? 0
            let resent = resumed.first?.chunkBytesSent ?? 0
            // Whatever the first attempt left on the receiver's disk is not sent again.
            #expect(resent <= missing, "re-sent \(resent) B for \(missing) B missing (first attempt \(firstAttempt) B)")
            #expect(resent < total)
            #expect(try EngineHarness.tree(flaky.library) == EngineHarness.tree(laptop.library))
            for asset in assets { #expect(try laptop.state(of: asset, for: flaky) == .synced) }
        }
    }

    @Test func declinedAndUnansweredOffersMoveNothing() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            // Trusted to connect, but offers need a person: one who says no, then one who never answers.
            let (laptop, desk) = try await Self.laptopAndAskingPeer(root, named: "desk", decisionTimeout: .milliseconds(300))
            try EngineHarness.writeSample(at: laptop.library, padding: 10_000)
            let assets = try await laptop.scan()
            let answering = Task {
                for await offer in desk.sync.incomingTransfers() {
                    #expect(offer.items.count == assets.count)
                    #expect(offer.from.deviceID == laptop.identity.deviceID)
                    offer.decline()
                    return
                }
            }
            let declined = await laptop.sync.send(assets, from: laptop.library).waitUntilCompleted()
            await answering.value
            // The person's "no" and nobody answering are told apart, so the sender's user knows which.
            guard case let .declined(reason)? = declined.first?.state else {
                Issue.record("expected declined, got \(String(describing: declined.first?.state))")
                return
            }
            #expect(reason.contains("declined") && !reason.contains("nobody answered"), "\(reason)")
            let unanswered = await laptop.sync.send(assets, from: laptop.library).waitUntilCompleted()
            guard case let .declined(why)? = unanswered.first?.state else {
                Issue.record("an unanswered offer should time out as declined, got \(String(describing: unanswered.first?.state))")
                return
            }
            #expect(why.contains("nobody answered in time"), "\(why)")
            #expect(try EngineHarness.tree(desk.library).isEmpty)
            #expect(try laptop.state(of: assets[0], for: desk) == .failed)
        }
    }

    /// On a manual clock: a person's answer on a loaded two-core machine may take any real
    /// time, and only the consent timeout decides when "no answer" becomes "no".
    @Test func untrustedConnectionNeedsConsent() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let network = InMemoryNetwork()
            let clock = ManualClock()
            let stranger = try TestDevice(name: "stranger", root: root, transport: network.transport(host: "stranger"))
            let home = try TestDevice(name: "home", root: root, transport: network.transport(host: "home"),
                                      decisionTimeout: .seconds(120), clock: clock)
            try await home.start(host: "home")
            var requests = home.sync.connectionRequests().makeAsyncIterator()
            // Nobody answers: declined once the timeout has passed — a decline, not any error.
            let unanswered = Task { () -> SyncError? in
                do throws(SyncError) {
                    try await stranger.sync.connect(to: home.address)
                    return nil
                } catch {
                    return error
                }
            }
            let first = try #require(await requests.next())
            #expect(first.isPending)
            await clock.waitForSleepers(count: 1)
            clock.advance(by: .seconds(120))
            guard case .declined? = await unanswered.value else {
                Issue.record("an unanswered connection request should be declined")
                return
            }
            // Someone says yes, whenever this machine gets round to it: no clock runs meanwhile.
            let answering = Task {
                while let request = await requests.next() {
                    if request.peer.deviceID == stranger.identity.deviceID, request.isPending {
                        try? await request.accept()
                        return
                    }
                }
            }
            let peer = try await stranger.sync.connect(to: home.address, expecting: home.identity.deviceID)
            await answering.value
            #expect(peer.deviceID == home.identity.deviceID)
            // Home sends its decision, then registers the session: the stranger can hear "yes"
            // a moment before home lists it. Give it that moment (bounded), then require it.
            let deadline = ContinuousClock.now + .seconds(5)
            while await home.sync.connectedPeers.isEmpty, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(await home.sync.connectedPeers.map(\.deviceID) == [stranger.identity.deviceID])
        }
    }

    @Test func sourceChangedWhileSendingFailsThatAssetOnly() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let (laptop, receivers) = try await Self.household(root, receivers: 1)
            try EngineHarness.writeSample(at: laptop.library, padding: 10_000)
            let assets = try await laptop.scan()
            // Edit one file after the scan: its manifest no longer describes it.
            let victim = try #require(assets.first { $0.files.contains { $0.manifest.path == "Videos/birthday.mp4" } })
            let path = laptop.library.appendingPathComponent("Videos/birthday.mp4")
            var bytes = try Data(contentsOf: path)
            bytes[bytes.count / 2] ^= 0xFF
            try bytes.write(to: path)
            let summary = try #require(await laptop.sync.send(assets, from: laptop.library).waitUntilCompleted().first)
            #expect(summary.assetsStored == assets.count - 1)
            #expect(summary.failures[victim.contentID]?.description.contains("changed while being sent") == true)
            if case .sourceChanged? = summary.failures[victim.contentID] {} else { Issue.record("expected .sourceChanged: \(String(describing: summary.failures[victim.contentID]))") }
            #expect(try laptop.state(of: victim, for: receivers[0]) == .failed)
            #expect(!FileManager.default.fileExists(atPath: receivers[0].library.appendingPathComponent("Videos/birthday.mp4").path))
        }
    }

    /// A settled file is sent on the scan's word (its status unchanged), but an edit that
    /// keeps size and mtime still moves the ctime: the sender hashes that file and stops it.
    @Test func editKeepingMtimeAfterASettledScanIsStillCaughtBySender() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let (laptop, receivers) = try await Self.household(root, receivers: 1)
            try EngineHarness.writeSample(at: laptop.library, padding: 10_000)
            try await TestSupport.waitForFilesToSettle()
            let scan = try await LibraryScanner(root: laptop.library, chunkIndex: laptop.chunkIndex).scan()
            #expect(scan.settledStatus.count == scan.statistics.files)
            let victim = try #require(scan.assets.first { $0.files.contains { $0.manifest.path == "Videos/birthday.mp4" } })
            let path = laptop.library.appendingPathComponent("Videos/birthday.mp4")
            var bytes = try [UInt8](Data(contentsOf: path))
            bytes[bytes.count / 2] ^= 0xFF
            try TestSupport.overwriteKeepingMtime(path, with: bytes)
            let transfer = await laptop.sync.send(scan.assets, from: laptop.library, settledStatus: scan.settledStatus)
            let summary = try #require(await transfer.waitUntilCompleted().first)
            #expect(summary.assetsStored == scan.assets.count - 1)
            #expect(summary.failures[victim.contentID]?.description.contains("changed while being sent") == true)
            if case .sourceChanged? = summary.failures[victim.contentID] {} else { Issue.record("expected .sourceChanged: \(String(describing: summary.failures[victim.contentID]))") }
            #expect(!FileManager.default.fileExists(atPath: receivers[0].library.appendingPathComponent("Videos/birthday.mp4").path))
            // Everything else arrived byte-exact.
            var expected = try EngineHarness.tree(laptop.library)
            expected["Videos/birthday.mp4"] = nil
            #expect(try EngineHarness.tree(receivers[0].library) == expected)
        }
    }

    /// Every chunk of a received file is checked against its hash on the way in, and its
    /// file hash is its chunk list's: the receiver's scan cache vouches for the file as its
    /// own scan would (a repeat push moves nothing, a rescan reads nothing), and the file is
    /// "settled", so sending it on needs no second hash of its chunks.
    @Test func receivedFilesAreVerifiedChunkByChunkAndTravelOnAsTheirOwn() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let (laptop, receivers) = try await Self.household(root, receivers: 1)
            let nas = receivers[0]
            try EngineHarness.writeSample(at: laptop.library, padding: 10_000)
            let assets = try await laptop.scan()
            let first = try #require(await laptop.sync.send(assets, from: laptop.library).waitUntilCompleted().first)
            #expect(first.assetsStored == assets.count)
            let paths = assets.flatMap { $0.files.map(\.manifest.path) }
            for path in paths {
                let entry = try #require(try nas.scanCache.entry(path: path), "no scan cache row for \(path)")
                let sent = try #require(assets.lazy.flatMap(\.files).first { $0.manifest.path == path })
                #expect(entry.manifest.chunks == sent.manifest.chunks && entry.manifest.fileHash == sent.manifest.fileHash)
            }
            let again = try #require(await laptop.sync.send(assets, from: laptop.library).waitUntilCompleted().first)
            #expect(again.assetsStored == assets.count)
            #expect(again.chunkBytesSent == 0)

            try await TestSupport.waitForFilesToSettle()
            let scan = try await LibraryScanner(root: nas.library, cache: nas.scanCache, chunkIndex: nas.chunkIndex).scan()
            #expect(scan.statistics.filesHashed == 0)
            #expect(Set(scan.settledStatus.paths) == Set(paths), "settled: \(scan.settledStatus.paths)")
            let expected = Set(assets.map(\.contentID))
            #expect(Set(scan.assets.map(\.contentID)) == expected)
        }
    }

    /// A laptop serving a sample library to pullers, trusting `puller` with what the flags say.
    static func pullServer(root: URL, network: InMemoryNetwork, trusting puller: TestDevice,
                           autoAcceptOffers: Bool, allowPulls: Bool) async throws -> TestDevice {
        let laptop = try TestDevice(name: "laptop", root: root, transport: network.transport(host: "laptop"), trusting: [puller.identity],
                                    autoAcceptOffers: autoAcceptOffers, allowPulls: allowPulls)
        try await laptop.start(host: "laptop")
        try EngineHarness.writeSample(at: laptop.library, padding: 5_000)
        let library = laptop.library
        await laptop.sync.servePulls(from: library) { _ in (try? await LibraryScanner(root: library).scan().assets) ?? [] }
        return laptop
    }

    @Test func peerAllowedToPullCanPullWhatItLacks() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let network = InMemoryNetwork()
            let nas = try TestDevice(name: "nas", root: root, transport: network.transport(host: "nas"))
            // Allowed to pull, and deliberately not auto-accepted: pulling needs only its own permission.
            let laptop = try await Self.pullServer(root: root, network: network, trusting: nas, autoAcceptOffers: false, allowPulls: true)
            // The NAS connects and asks; the laptop lets it pull, so the offer comes back and lands.
            let accepting = Task { () throws -> [ContentID: ReceiveSessionHandle.Outcome] in
                for await offer in nas.sync.incomingTransfers() where offer.isPending {
                    let session = try await offer.accept()
                    return try await session.files()
                }
                return [:]
            }
            let laptopPeer = try await nas.sync.connect(to: laptop.address, expecting: laptop.identity.deviceID)
            try await nas.sync.pull(from: laptopPeer)
            let outcomes = try await accepting.value
            #expect(!outcomes.isEmpty)
            #expect(outcomes.values.allSatisfy { if case .stored = $0 { true } else { false } })
            #expect(try EngineHarness.tree(nas.library) == EngineHarness.tree(laptop.library))
        }
    }

    /// Connected, but not allowed to pull: neither as a stranger whose connection was accepted,
    /// nor as a device whose pushes are accepted unasked (that permission does not extend to pulls).
    @Test(arguments: [false, true]) func peerNotAllowedToPullIsRefused(autoAcceptOffers: Bool) async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let network = InMemoryNetwork()
            let phone = try TestDevice(name: "phone", root: root, transport: network.transport(host: "phone"))
            let laptop = try await Self.pullServer(root: root, network: network, trusting: phone, autoAcceptOffers: autoAcceptOffers, allowPulls: false)
            let offered = Task {
                for await offer in phone.sync.incomingTransfers() { return offer.fileCount }
                return 0
            }
            let peer = try await phone.sync.connect(to: laptop.address, expecting: laptop.identity.deviceID)
            try await phone.sync.pull(from: peer)
            // The laptop refuses with an Error and drops the connection; nothing is offered.
            for _ in 0..<200 where await !phone.sync.connectedPeers.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
            #expect(await phone.sync.connectedPeers.isEmpty)
            offered.cancel()
            #expect(await offered.value == 0)
            #expect(try EngineHarness.tree(phone.library).isEmpty)
            #expect(try !EngineHarness.tree(laptop.library).isEmpty)
        }
    }

    @Test func pullPermissionIsSeparateFromOfferPermission() throws {
        let id = DeviceIdentity.generate().deviceID
        let offersOnly = TrustPolicy([.init(deviceID: id, acceptsOffers: true)])
        #expect(offersOnly.acceptsOffers(from: id))
        #expect(!offersOnly.mayPull(id))
        let pullOnly = TrustPolicy([.init(deviceID: id, acceptsOffers: false, mayPull: true)])
        #expect(pullOnly.mayPull(id))
        #expect(!pullOnly.acceptsOffers(from: id))
        #expect(!TrustPolicy().mayPull(id))
    }

    @Test func conflictingFileIsStoredBesideNeverOverwritten() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let (laptop, receivers) = try await Self.household(root, receivers: 1)
            let nas = receivers[0]
            try TestSupport.write(Array("the laptop's notes\n".utf8), to: laptop.library.appendingPathComponent("notes.txt"))
            try TestSupport.write(Array("the NAS's own notes\n".utf8), to: nas.library.appendingPathComponent("notes.txt"))
            let summary = try #require(await laptop.sync.send(try await laptop.scan(), from: laptop.library).waitUntilCompleted().first)
            #expect(summary.state == .completed)
            let tree = try EngineHarness.tree(nas.library)
            #expect(tree["notes.txt"] == Data("the NAS's own notes\n".utf8))
            #expect(tree.count == 2)
            #expect(tree.first { $0.key.hasPrefix("notes (conflict ") }?.value == Data("the laptop's notes\n".utf8))
        }
    }
}
