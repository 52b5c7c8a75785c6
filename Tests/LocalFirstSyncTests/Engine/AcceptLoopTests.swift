import Foundation
import Synchronization
import Testing
@testable import LocalFirstSync
@testable import LFSyncCrypto
@testable import LFSyncStore
@testable import LFSyncTransport
@testable import LocalFirstSyncTesting

/// `serve` must survive a failing `accept()` (out of descriptors, say): the
/// listener stays, and the next device gets in.
@Suite(.timeLimit(.minutes(1))) struct AcceptLoopTests {
    /// A listener whose first `failures` accepts fail as `accept4` does at the open-file limit.
    final class FailureBudget: Sendable {
        let left: Mutex<Int>
        init(_ count: Int) { left = Mutex(count) }
    }

    struct FlakyListener: Listener {
        let inner: any Listener
        let failuresLeft: FailureBudget
        var localAddress: PeerAddress { inner.localAddress }

        func accept() async throws(TransportError) -> any Connection {
            let fail = failuresLeft.left.withLock { left -> Bool in
                guard left > 0 else { return false }
                left -= 1
                return true
            }
            if fail { throw .system(operation: "accept", errno: EMFILE) }
            return try await inner.accept()
        }

        func close() async { await inner.close() }
    }

    struct FlakyTransport: Transport {
        let inner: InMemoryTransport
        let failures: Int

        func connect(to address: PeerAddress, timeout: Duration) async throws(TransportError) -> any Connection {
            try await inner.connect(to: address, timeout: timeout)
        }

        func listen(on address: PeerAddress) async throws(TransportError) -> any Listener {
            FlakyListener(inner: try await inner.listen(on: address), failuresLeft: FailureBudget(failures))
        }
    }

    @Test func theListenerKeepsAcceptingAfterFailedAccepts() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let network = InMemoryNetwork()
            let laptop = try TestDevice(name: "laptop", root: root, transport: network.transport(host: "laptop"))
            let lines = Mutex<[String]>([])
            let nas = LocalSync(
                identity: DeviceIdentity.generate(), store: try SyncStateStore.inMemory(),
                configuration: .init(deviceName: "nas", trust: TrustPolicy([.init(deviceID: laptop.identity.deviceID, acceptsConnections: true, acceptsOffers: false)]),
                                     log: { line in lines.withLock { $0.append(line) } }),
                transport: FlakyTransport(inner: network.transport(host: "nas"), failures: 5))
            let address = try await nas.start(listeningOn: PeerAddress(host: "nas", port: 7000), advertise: false)
            let peer = try await laptop.sync.connect(to: address)
            #expect(peer.name == "nas")
            #expect(lines.withLock { $0.contains { $0.contains("accepting a connection failed") } }, "the failure is logged")
            await nas.stop()
        }
    }
}
