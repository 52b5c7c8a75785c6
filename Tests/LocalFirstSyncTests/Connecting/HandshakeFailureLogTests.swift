import Foundation
import Synchronization
import Testing
@testable import LocalFirstSync
@testable import LFSyncStore
@testable import LFSyncSystem
@testable import LFSyncTransport
@testable import LFSyncWire
@testable import LocalFirstSyncTesting

/// A stranger can fail handshakes as fast as it can open connections; `serve` must not
/// write a log line for each (the review's item 5): one line per interval, the rest counted.
@Suite(.timeLimit(.minutes(1))) struct HandshakeFailureLogTests {
    @Test func failedHandshakesAreLoggedAtMostOncePerInterval() async throws {
        let network = InMemoryNetwork()
        let lines = LockedState<[String]>([])
        let sync = LocalSync(
            identity: .generate(), store: try SyncStateStore.inMemory(),
            configuration: .init(deviceName: "nas", log: { line in lines.withLock { $0.append(line) } }),
            transport: network.transport(host: "nas"))
        let address = try await sync.start(listeningOn: PeerAddress(host: "nas", port: 7000), advertise: false)
        let attempts = 30
        for index in 0..<attempts {
            let connection = try await network.transport(host: "mallory-\(index % 3)").connect(to: address, timeout: .seconds(5))
            var garbage: [UInt8] = []
            NoiseMessageFramer.prefixed(Array("not lfsync".utf8), into: &garbage)
            try await connection.send(garbage)
            // The responder refuses the opening and hangs up.
            while try await connection.receive() != nil {}
        }
        let failures = lines.withLock { $0 }.filter { $0.contains("incoming connection") && $0.contains("failed") }
        #expect(failures.count >= 1, "the first failure is logged")
        // Within one 10 s interval, one line (two if this machine took longer than that).
        #expect(failures.count <= 2, "\(failures.count) lines for \(attempts) failed handshakes")
        await sync.stop()
    }
}
