import Foundation
import Testing
@testable import LFSyncFixtures
@testable import LocalFirstSync
@testable import LFSyncContent
@testable import LFSyncTCP
@testable import LFSyncTransport
import LFSyncSystem
import LFSyncCrypto
import LFSyncStore
import LFSyncLanding
import LFSyncDiscovery
import LFSyncWire

/// The key scenarios again, over real TCP on loopback.
@Suite(.timeLimit(.minutes(3))) struct LocalSyncTCPTests {
    @Test func threePeerBroadcastOverTCP() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let laptop = try TestDevice(name: "laptop", root: root, transport: TCPTransport())
            var receivers: [TestDevice] = []
            for name in ["nas", "desktop", "spare"] {
                let device = try TestDevice(name: name, root: root, transport: TCPTransport(), trusting: [laptop.identity])
                try await device.start(host: "127.0.0.1")
                try await laptop.sync.connect(to: device.address, expecting: device.identity.deviceID)
                receivers.append(device)
            }
            try EngineHarness.writeSample(at: laptop.library, padding: 400_000)
            let assets = try await laptop.scan()
            let transfer = await laptop.sync.send(assets, from: laptop.library)
            var peersSeen = Set<String>()
            for await update in transfer { peersSeen.insert(update.peer.name) }
            let summaries = await transfer.waitUntilCompleted()
            #expect(peersSeen == ["nas", "desktop", "spare"])
            #expect(summaries.allSatisfy { $0.state == .completed })
            let expected = try EngineHarness.tree(laptop.library)
            for device in receivers {
                #expect(try EngineHarness.tree(device.library) == expected)
                for asset in assets { #expect(try laptop.state(of: asset, for: device) == .synced) }
            }
            await laptop.sync.stop()
            for device in receivers { await device.sync.stop() }
        }
    }

    /// The receiving device goes away mid-transfer (its engine stops, as on a crash) and
    /// comes back on the same library: the next push sends only what is missing.
    @Test func receiverRestartResumesFromStaging() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let laptop = try TestDevice(name: "laptop", root: root, transport: TCPTransport())
            let nas = try TestDevice(name: "nas", root: root, transport: TCPTransport(), trusting: [laptop.identity])
            try await nas.start(host: "127.0.0.1")
            try await laptop.sync.connect(to: nas.address)
            try EngineHarness.writeSample(at: laptop.library, padding: 2_000_000)
            let assets = try await laptop.scan()
            let total = assets.reduce(UInt64(0)) { $0 + $1.totalSize }
            let transfer = await laptop.sync.send(assets, from: laptop.library)
            for await update in transfer where update.progress.bytesDone > total / 2 {
                await nas.sync.stop()
                break
            }
            let first = try #require(await transfer.waitUntilCompleted().first)
            guard case .failed = first.state else {
                Issue.record("the interrupted transfer should fail, got \(first.state)")
                return
            }
            // What the receiver durably holds now (installed files and verified chunks in staging).
            let prepared = try LibraryImporter(library: nas.library, chunkIndex: nas.chunkIndex)
                .prepare(PlacedAsset.grouping(assets), known: [])
            let missing = prepared.plan.missing.reduce(UInt64(0)) { total, entry in
                guard let manifest = prepared.files[entry.key]?.manifest else { return total }
                return entry.value.indices.reduce(total) { $0 + UInt64(manifest.chunks[$1].length) }
            }
            #expect(missing < total)
            let missingOnDisk = try EngineHarness.missingChunkBytes(of: assets, in: nas.library)
            #expect(missing <= missingOnDisk, "the plan asks for no chunk the disk holds")
            // Same identity, same library, new engine: the partials in staging are found again.
            let restarted = LocalSync(
                identity: nas.identity, store: nas.store,
                configuration: .init(deviceName: "nas", library: nas.library, libraryChunkIndex: nas.chunkIndex,
                                     trust: TrustPolicy([.init(deviceID: laptop.identity.deviceID, acceptsOffers: true)])),
                transport: TCPTransport())
            let address = try await restarted.start(listeningOn: PeerAddress(host: "127.0.0.1", port: 0), advertise: false)
            try await laptop.sync.connect(to: address, expecting: nas.identity.deviceID)
            let second = try #require(await laptop.sync.send(assets, from: laptop.library).waitUntilCompleted().first)
            #expect(second.state == .completed)
            // Only the missing chunks move again (the receiver asks for nothing else), measured
            // on its disk without its code.
            #expect(second.chunkBytesSent <= missingOnDisk, "sent \(second.chunkBytesSent) B for \(missingOnDisk) B missing")
            print("resume after receiver restart: corpus \(total) B, first attempt put \(first.chunkBytesSent) B on the wire, receiver kept \(total - missing) B, second attempt sent \(second.chunkBytesSent) B for \(missing) B missing")
            #expect(try EngineHarness.tree(nas.library) == EngineHarness.tree(laptop.library))
            await restarted.stop()
            await laptop.sync.stop()
        }
    }
}
