import Foundation
import Testing
@testable import LocalFirstSync
@testable import LFSyncCrypto
@testable import LFSyncWire
@testable import LocalFirstSyncTesting

/// Two devices that each ask the other to sync at the same moment (two `lfsync sync`
/// services after one change) both get their answers. Found in the household test: each
/// device applied the other's SyncRequest in its one queue of questions, asked the other
/// for its path states, and that question waited behind the other's sync — five minutes
/// on both sides, then both failed.
@Suite(.timeLimit(.minutes(1))) struct CrossedSyncRequestsTests {
    /// Lets both handlers go on only once both are applying a request.
    actor Barrier {
        private var arrived = 0
        private var waiters: [CheckedContinuation<Void, Never>] = []

        func arrive(expecting count: Int) async {
            arrived += 1
            if arrived >= count {
                for waiter in waiters { waiter.resume() }
                waiters = []
                return
            }
            await withCheckedContinuation { waiters.append($0) }
        }
    }

    static func emptyHistory(_ request: WireMessage.PathStateRequest) -> WireMessage.PathStateReport {
        .init(requestID: request.requestID, status: .answered, historyID: 7, through: 0, more: false, entries: [])
    }

    @Test func twoDevicesAskingEachOtherToSyncAtOnceBothGetAnswers() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let network = InMemoryNetwork()
            let laptop = try TestDevice(name: "laptop", root: root, transport: network.transport(host: "laptop"))
            let nas = try TestDevice(name: "nas", root: root, transport: network.transport(host: "nas"), trusting: [laptop.identity])
            _ = await laptop.sync.updateTrust(TrustPolicy([TrustPolicy.Entry(deviceID: nas.identity.deviceID, acceptsConnections: true, acceptsOffers: true, mayPull: false)]))
            try await nas.start(host: "nas")
            let barrier = Barrier()
            // Applying a sync reads the asker's path states, as `lfsync`'s reconciler does.
            for device in [laptop, nas] {
                let sync = device.sync
                await sync.serveSyncRequests { peer, request in
                    await barrier.arrive(expecting: 2)
                    do {
                        _ = try await sync.pathStates(from: peer, after: nil, timeout: .seconds(20))
                        return .init(requestID: request.requestID, status: .synced)
                    } catch {
                        return .init(requestID: request.requestID, status: .failed, reason: "\(error)")
                    }
                }
            }
            let nasPeer = try await laptop.sync.connect(to: nas.address, expecting: nas.identity.deviceID)
            var laptopPeer: Peer?
            for _ in 0..<200 where laptopPeer == nil {
                laptopPeer = await nas.sync.connectedPeers.first
                if laptopPeer == nil { try await Task.sleep(for: .milliseconds(5)) }
            }
            let laptopSeenByNas = try #require(laptopPeer)
            let source = SyncSource(pathStates: { Self.emptyHistory($0) }, chunk: { _, _ in nil })
            async let fromLaptop = laptop.sync.requestSync([], with: nasPeer, answeringFrom: source, timeout: .seconds(30))
            async let fromNas = nas.sync.requestSync([], with: laptopSeenByNas, answeringFrom: source, timeout: .seconds(30))
            let (laptopReply, nasReply) = try await (fromLaptop, fromNas)
            #expect(laptopReply.status == .synced, "\(laptopReply.reason ?? "")")
            #expect(nasReply.status == .synced, "\(nasReply.reason ?? "")")
        }
    }
}
