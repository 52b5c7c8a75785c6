import Foundation
import Testing
@testable import LFSyncFixtures
@testable import LocalFirstSync
@testable import LFSyncCrypto
@testable import LFSyncDiscovery
@testable import LFSyncStore
@testable import LFSyncWire
@testable import LocalFirstSyncTesting

/// The library API as an app embedding lfsync writes it (README, "Library quickstart").
@Suite(.timeLimit(.minutes(2))) struct LibraryAPITests {
    @Test func anArrayOfPeersSendsToThatSubsetOnly() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let (laptop, receivers) = try await LocalSyncTests.household(root, receivers: 2)
            try EngineHarness.writeSample(at: laptop.library, padding: 5_000)
            let assets = try await laptop.scan()
            let nas = try #require(await laptop.sync.connectedPeers.first { $0.deviceID == receivers[0].identity.deviceID })
            let summaries = await laptop.sync.send(assets, from: laptop.library, to: [nas]).waitUntilCompleted()
            #expect(summaries.map(\.peer) == [nas])
            #expect(summaries.first?.state == .completed)
            #expect(try EngineHarness.tree(receivers[0].library) == EngineHarness.tree(laptop.library))
            #expect(try EngineHarness.tree(receivers[1].library).isEmpty, "the peer not named received nothing")
            // The ledger, asked by the peer's proven identity as the app holds it.
            #expect(try await laptop.store.contentIDs(notSyncedWith: nas.syncIdentity, from: assets.map(\.contentID)).isEmpty)
            let other = try #require(await laptop.sync.connectedPeers.first { $0 != nas })
            #expect(try await laptop.store.assets(notSyncedWith: other.syncIdentity, from: assets).count == assets.count)
        }
    }

    @Test func oneAssetCanBeSentOnItsOwn() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let (laptop, receivers) = try await LocalSyncTests.household(root, receivers: 1)
            try EngineHarness.writeSample(at: laptop.library, padding: 5_000)
            let asset = try #require(try await laptop.scan().first)
            let summaries = await laptop.sync.send(asset, from: laptop.library).waitUntilCompleted()
            #expect(summaries.first?.assetsStored == 1)
            #expect(try laptop.state(of: asset, for: receivers[0]) == .synced)
        }
    }

    @Test func theEventStreamsFinishWhenTheEngineStops() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let network = InMemoryNetwork()
            let nas = try TestDevice(name: "nas", root: root, transport: network.transport(host: "nas"))
            try await nas.start(host: "nas")
            let requests = Task { for await _ in nas.sync.connectionRequests() {} }
            let transfers = Task { for await _ in nas.sync.incomingTransfers() {} }
            await nas.sync.stop()
            // Both loops end: an app's consumer tasks finish with the engine.
            await requests.value
            await transfers.value
        }
    }

    @Test func aDiscoveredPeerIsDialledWithItsAdvertisedDeviceIDPinned() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let network = InMemoryNetwork()
            let laptop = try TestDevice(name: "laptop", root: root, transport: network.transport(host: "laptop"))
            let nas = try TestDevice(name: "nas", root: root, transport: network.transport(host: "nas"), trusting: [laptop.identity])
            try await nas.start(host: "nas")
            let found = DiscoveredPeer(instanceName: "nas", deviceID: nas.identity.deviceID.description, protocolVersion: WireProtocol.version,
                                       host: "nas", port: nas.address.port)
            let peer = try await laptop.sync.connect(to: found)
            #expect(peer.deviceID == nas.identity.deviceID)

            // Someone else answering at the advertised address is refused, not trusted.
            let impostor = DiscoveredPeer(instanceName: "nas", deviceID: DeviceIdentity.generate().deviceID.description,
                                          protocolVersion: WireProtocol.version, host: "nas", port: nas.address.port)
            // Refused for the key it proved, not for any reason at all.
            await #expect {
                try await laptop.sync.connect(to: impostor)
            } throws: { error in
                guard case let .connectionFailed(reason)? = error as? SyncError else { return false }
                return reason.contains(nas.identity.deviceID.description) && reason.contains("not the expected \(impostor.deviceID ?? "")")
            }
            let anonymous = DiscoveredPeer(instanceName: "x", deviceID: nil, protocolVersion: nil, host: "nas", port: nas.address.port)
            await #expect(throws: SyncError.connectionFailed("x advertises no valid Device ID; connect(to:expecting:) with one you trust")) {
                try await laptop.sync.connect(to: anonymous)
            }
        }
    }

    @Test func theServiceNameIsTheServiceTypeAdvertised() throws {
        let store = try SyncStateStore.inMemory()
        let sync = LocalSync(serviceName: "photos", identity: .generate(), store: store, configuration: .init(deviceName: "a"))
        #expect(sync.serviceType == "_photos._tcp")
        #expect(LocalSync(identity: .generate(), store: store, configuration: .init(deviceName: "b")).serviceType == "_lfsync._tcp")
    }

    /// An offer nobody answered in time was declined for us: accepting it later, or
    /// waiting for its files, says so with a typed error instead of waiting for ever.
    @Test func acceptingAnExpiredOfferThrowsExpired() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let network = InMemoryNetwork()
            let clock = ManualClock()
            let laptop = try TestDevice(name: "laptop", root: root, transport: network.transport(host: "laptop"))
            let nas = try TestDevice(name: "nas", root: root, transport: network.transport(host: "nas"), trusting: [laptop.identity],
                                     autoAcceptOffers: false, decisionTimeout: .seconds(60), clock: clock)
            try await nas.start(host: "nas")
            try await laptop.sync.connect(to: nas.address, expecting: nas.identity.deviceID)
            try EngineHarness.writeSample(at: laptop.library, padding: 5_000)
            var offers = nas.sync.incomingTransfers().makeAsyncIterator()
            let transfer = await laptop.sync.send(try await laptop.scan(), from: laptop.library)
            let offer = try #require(await offers.next())
            await clock.waitForSleepers(count: 1)
            clock.advance(by: .seconds(60))
            let summaries = await transfer.waitUntilCompleted()
            guard case .declined? = summaries.first?.state else {
                Issue.record("an offer that expired should reach the sender as declined: \(summaries)")
                return
            }
            // Per asset, typed: the receiver declined for its absent person, and says so.
            let failures = summaries.first?.failures ?? [:]
            #expect(!failures.isEmpty && failures.values.allSatisfy {
                if case let .declined(reason) = $0 { reason.contains("nobody answered in time") } else { false }
            }, "\(failures)")
            await #expect(throws: IncomingTransferError.expired) { try await offer.accept() }
            await #expect(throws: IncomingTransferError.expired) { try await offer.session.files() }
        }
    }

    @Test func filesAlreadyInTheLibraryAreReportedAsAlreadyPresent() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let (laptop, receivers) = try await LocalSyncTests.household(root, receivers: 1)
            try EngineHarness.writeSample(at: laptop.library, padding: 5_000)
            let assets = try await laptop.scan()
            var offers = receivers[0].sync.incomingTransfers().makeAsyncIterator()
            _ = await laptop.sync.send(assets, from: laptop.library).waitUntilCompleted()
            let first = try await #require(await offers.next()).accept().files()
            #expect(first.values.allSatisfy { if case .stored = $0 { true } else { false } })
            _ = await laptop.sync.send(assets, from: laptop.library).waitUntilCompleted()
            let second = try await #require(await offers.next()).accept().files()
            #expect(second.count == assets.count)
            #expect(second.values.allSatisfy { if case .alreadyPresent = $0 { true } else { false } }, "\(second.values)")
            #expect(second.values.allSatisfy { $0.isInLibrary })
        }
    }
}
