import Foundation
import Testing
@testable import LFSyncFixtures
@testable import LocalFirstSync
@testable import LocalFirstSyncTesting
import LFSyncSystem
import LFSyncCrypto
import LFSyncContent
import LFSyncStore
import LFSyncTransport
import LFSyncTCP
import LFSyncDiscovery
import LFSyncWire

/// `LocalSync.updateTrust`: a new trust policy applies to the connections already
/// open, over the in-memory network.
@Suite(.timeLimit(.minutes(2))) struct TrustUpdateTests {
    @Test func aDeviceNoLongerTrustedIsDisconnectedAndOneStillTrustedIsNot() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let network = InMemoryNetwork()
            let laptop = try TestDevice(name: "laptop", root: root, transport: network.transport(host: "laptop"))
            let phone = try TestDevice(name: "phone", root: root, transport: network.transport(host: "phone"))
            let nas = try TestDevice(name: "nas", root: root, transport: network.transport(host: "nas"), trusting: [laptop.identity, phone.identity],
                                     decisionTimeout: .milliseconds(300))
            try await nas.start(host: "nas")
            try await laptop.sync.connect(to: nas.address, expecting: nas.identity.deviceID)
            try await phone.sync.connect(to: nas.address, expecting: nas.identity.deviceID)
            try await Self.eventually { await nas.sync.connectedPeers.count == 2 }

            var withoutLaptop = await nas.sync.trust
            withoutLaptop.entries[laptop.identity.deviceID] = nil
            let cut = await nas.sync.updateTrust(withoutLaptop)
            #expect(cut.map(\.deviceID) == [laptop.identity.deviceID])
            #expect(await nas.sync.connectedPeers.map(\.deviceID) == [phone.identity.deviceID])
            try await Self.eventually { await laptop.sync.connectedPeers.isEmpty }
            #expect(!nas.sync.trust.acceptsConnection(from: laptop.identity.deviceID))

            // And it may not come back: a new connection is now a stranger's, declined with no one to ask.
            await #expect(throws: SyncError.self) {
                try await laptop.sync.connect(to: nas.address, expecting: nas.identity.deviceID)
            }
            // Trusted again, it may.
            let again = await nas.sync.updateTrust(await nas.sync.trust.adding(laptop.identity.deviceID))
            #expect(again.isEmpty)
            try await laptop.sync.connect(to: nas.address, expecting: nas.identity.deviceID)
            await nas.sync.stop()
            await laptop.sync.stop()
            await phone.sync.stop()
        }
    }

    /// Offers are judged by the policy in force when they arrive: after `updateTrust`
    /// takes away auto-accept, the next push is asked about (and, unanswered, declined).
    @Test func anOfferAfterTheChangeIsJudgedByTheNewPolicy() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let network = InMemoryNetwork()
            let laptop = try TestDevice(name: "laptop", root: root, transport: network.transport(host: "laptop"))
            let nas = try TestDevice(name: "nas", root: root, transport: network.transport(host: "nas"), trusting: [laptop.identity],
                                     decisionTimeout: .milliseconds(300))
            try await nas.start(host: "nas")
            let peer = try await laptop.sync.connect(to: nas.address, expecting: nas.identity.deviceID)
            try TestSupport.write(Array("one".utf8), to: laptop.library.appendingPathComponent("one.txt"))
            let first = await laptop.sync.send(try await laptop.scan(), from: laptop.library, to: .peers([peer]))
            #expect(await first.waitUntilCompleted().map(\.state) == [.completed])

            var askFirst = await nas.sync.trust
            askFirst.entries[laptop.identity.deviceID]?.acceptsOffers = false
            #expect(await nas.sync.updateTrust(askFirst).isEmpty)  // still trusted to connect: not cut off
            try TestSupport.write(Array("two".utf8), to: laptop.library.appendingPathComponent("two.txt"))
            let second = await laptop.sync.send(try await laptop.scan(), from: laptop.library, to: .peers([peer]))
            let state = await second.waitUntilCompleted().first?.state
            guard case .declined? = state else {
                Issue.record("the second push was \(String(describing: state)), not declined")
                return
            }
            #expect(!FileManager.default.fileExists(atPath: nas.library.appendingPathComponent("two.txt").path))
            await nas.sync.stop()
            await laptop.sync.stop()
        }
    }

    static func eventually(_ condition: () async -> Bool) async throws {
        for _ in 0..<200 {
            if await condition() { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("condition not met within 4 s")
    }
}

extension TrustPolicy {
    func adding(_ id: DeviceID) -> TrustPolicy {
        var copy = self
        copy.entries[id] = .init(deviceID: id, acceptsConnections: true, acceptsOffers: true)
        return copy
    }
}
