import Foundation
import Synchronization
import Testing
@testable import LocalFirstSync
@testable import LFSyncStore
@testable import LFSyncTransport
@testable import LFSyncWire
@testable import LocalFirstSyncTesting

/// The deadlines before consent, driven by an injected manual clock
/// (PROTOCOL.md, "Limits and deadlines"): nothing here sleeps.
@Suite(.timeLimit(.minutes(1))) struct SetUpDeadlineTests {
    static func responder(clock: ManualClock, network: InMemoryNetwork) async throws -> (LocalSync, PeerAddress) {
        let sync = LocalSync(
            identity: .generate(), store: try SyncStateStore.inMemory(),
            configuration: .init(deviceName: "nas", clock: clock),
            transport: network.transport(host: "nas", configuration: .init(idleTimeout: nil)))
        let address = try await sync.start(listeningOn: PeerAddress(host: "nas", port: 7000), advertise: false)
        return (sync, address)
    }

    /// A connection that never starts the handshake is closed once the set-up time is up,
    /// and not a moment before.
    @Test func aSilentStrangerIsClosedAtTheSetUpDeadline() async throws {
        let clock = ManualClock()
        let network = InMemoryNetwork(clock: clock)
        let (nas, address) = try await Self.responder(clock: clock, network: network)
        let silent = try await network.transport(host: "mallory", configuration: .init(idleTimeout: nil)).connect(to: address, timeout: .seconds(5))
        // Two sleepers: the set-up watchdog and the handshake's own deadline.
        await clock.waitForSleepers(count: 2)
        clock.advance(by: WireProtocol.setUpTimeout - .seconds(1))
        #expect(clock.sleeperCount >= 2, "a second before the deadline both deadlines are still pending")
        let closed = Mutex(false)
        let stillOpen = Task {
            let bytes = try await silent.receive()
            closed.withLock { $0 = true }
            return bytes
        }
        // The connection itself, not only its timers: a second before the deadline it is open
        // (the manual clock stands still meanwhile, so this real wait cannot reach the deadline).
        try await Task.sleep(for: .milliseconds(200))
        #expect(!closed.withLock { $0 }, "the connection was closed before the set-up deadline")
        try await silent.send([0])
        clock.advance(by: .seconds(1))
        let ended = try await stillOpen.value
        #expect(ended == nil, "the responder closed the silent connection")
        await nas.stop()
    }

    /// A stranger whose connection nobody answers is declined when the consent time is up.
    @Test func anUnansweredConnectionRequestIsDeclinedAtTheConsentTimeout() async throws {
        let clock = ManualClock()
        let network = InMemoryNetwork(clock: clock)
        let (nas, address) = try await Self.responder(clock: clock, network: network)
        let stranger = LocalSync(identity: .generate(), store: try SyncStateStore.inMemory(), configuration: .init(deviceName: "stranger"),
                                 transport: network.transport(host: "stranger", configuration: .init(idleTimeout: nil)))
        let dial = Task { () -> SyncError? in
            do throws(SyncError) {
                try await stranger.connect(to: address)
                return nil
            } catch {
                return error
            }
        }
        var requests = nas.connectionRequests().makeAsyncIterator()
        let request = try #require(await requests.next())
        #expect(request.isPending)
        await clock.waitForSleepers(count: 1)
        clock.advance(by: WireProtocol.consentTimeout)
        guard case .declined? = await dial.value else {
            Issue.record("the request was not declined at the consent timeout")
            return
        }
        #expect(!request.isPending)
        await nas.stop()
    }
}
