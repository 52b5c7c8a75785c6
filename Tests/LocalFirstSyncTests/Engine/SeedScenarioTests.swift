import Foundation
import Testing
@testable import LFSyncFixtures
@testable import LocalFirstSync
@testable import LocalFirstSyncTesting

/// The scenarios the seed's own suite covered that ours had not spelled out
/// (issue 15): declining a connection, a slow peer that does not hold back a
/// fast one, an answer racing its timeout, a broadcast reading each chunk once.
@Suite(.timeLimit(.minutes(2))) struct SeedScenarioTests {
    @Test func aDeclinedConnectionFailsTheDialWithTheReason() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let network = InMemoryNetwork()
            let stranger = try TestDevice(name: "stranger", root: root, transport: network.transport(host: "stranger"))
            let home = try TestDevice(name: "home", root: root, transport: network.transport(host: "home"))
            try await home.start(host: "home")
            let answering = Task {
                for await request in home.sync.connectionRequests() where request.isPending {
                    request.decline()
                    return
                }
            }
            do throws(SyncError) {
                try await stranger.sync.connect(to: home.address, expecting: home.identity.deviceID)
                Issue.record("a declined connection was set up")
            } catch {
                guard case let .declined(reason) = error else {
                    Issue.record("expected .declined, got \(error)")
                    return
                }
                #expect(reason.contains("home"))
            }
            await answering.value
            #expect(await home.sync.connectedPeers.isEmpty)
            #expect(await stranger.sync.connectedPeers.isEmpty)
        }
    }

    /// One peer's link is slow: the fast one completes while the slow one is part-way,
    /// each with its own progress (never a blended average), and the slow one completes later.
    @Test func aThrottledPeerDoesNotHoldBackAFastOne() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let network = InMemoryNetwork()
            let laptop = try TestDevice(name: "laptop", root: root, transport: network.transport(host: "laptop"))
            var receivers: [TestDevice] = []
            for name in ["fast", "slow"] {
                let device = try TestDevice(name: name, root: root, transport: network.transport(host: name), trusting: [laptop.identity])
                try await device.start(host: name)
                receivers.append(device)
            }
            let slow = receivers[1]
            // Every delivery on the slow link takes 200 ms (set before dialling: faults apply to
            // new connections): with a 1 MiB window that is about 5 MB/s.
            network.setFaults(.delay(.milliseconds(200)), for: slow.address)
            for device in receivers { try await laptop.sync.connect(to: device.address, expecting: device.identity.deviceID) }
            try EngineHarness.writeSample(at: laptop.library, padding: 600_000)
            let assets = try await laptop.scan()
            let transfer = await laptop.sync.send(assets, from: laptop.library)
            var slowWhenFastFinished: TransferUpdate?
            var latest: [String: TransferUpdate] = [:]
            for await update in transfer {
                latest[update.peer.name] = update
                if update.peer.name == receivers[0].name, update.state == .completed, slowWhenFastFinished == nil {
                    slowWhenFastFinished = latest[slow.name]
                }
            }
            let summaries = await transfer.waitUntilCompleted()
            #expect(summaries.allSatisfy { $0.state == .completed })
            let partWay = try #require(slowWhenFastFinished, "the slow peer had published nothing yet")
            #expect(!partWay.state.isFinal, "the slow peer was still sending when the fast one finished")
            #expect(partWay.progress.bytesDone < partWay.progress.bytesTotal || partWay.progress.bytesTotal == 0)
            #expect(latest[slow.name]?.state == .completed)
            #expect(latest[slow.name]?.progress.fractionCompleted == 1)
            #expect(try EngineHarness.tree(slow.library) == EngineHarness.tree(laptop.library))
        }
    }

    /// A person answering at the very moment the timeout fires: exactly one answer counts,
    /// and the waiter is resumed exactly once (a double resume would trap).
    @Test func anAnswerRacingItsTimeoutResumesOnce() async {
        for round in 0..<300 {
            let decision = OneShotDecision()
            async let waited = decision.wait(timeout: .zero)
            let counted = decision.decide(round.isMultiple(of: 2))
            let answer = await waited
            if counted { #expect(answer == round.isMultiple(of: 2)) } else { #expect(answer == false) }
            #expect(decision.decide(true) == false, "a second answer never counts")
        }
    }

    /// Three peers, one disk read per chunk: the shared reader serves every peer from one read.
    @Test func aBroadcastReadsEachChunkFromDiskOnce() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let (laptop, receivers) = try await LocalSyncTests.household(root, receivers: 3)
            try EngineHarness.writeSample(at: laptop.library, padding: 200_000)
            let assets = try await laptop.scan()
            let transfer = await laptop.sync.send(assets, from: laptop.library)
            let summaries = await transfer.waitUntilCompleted()
            #expect(summaries.count == 3 && summaries.allSatisfy { $0.state == .completed }, "\(summaries.map(\.state))")
            // Each chunk of each file at most once (three peers reading on their own would be 3×).
            let chunks = assets.reduce(0) { $0 + $1.files.reduce(0) { $0 + $1.manifest.chunks.count } }
            let reads = try #require(await transfer.chunkReader?.diskReads)
            #expect(reads <= chunks, "\(reads) disk reads for \(chunks) chunks sent to 3 peers")
            #expect(reads > 0)
            // And encrypted once for all three: every large chunk travelled as a shared segment.
            let sealed = try #require(await transfer.chunkReader?.chunksSealed)
            #expect(sealed > 0 && sealed <= reads, "\(sealed) chunks sealed once of \(reads) read")
            for device in receivers { #expect(try EngineHarness.tree(device.library) == EngineHarness.tree(laptop.library)) }
        }
    }
}
