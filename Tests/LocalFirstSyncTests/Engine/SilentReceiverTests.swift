import Foundation
import Testing
@testable import LFSyncFixtures
@testable import LocalFirstSync
@testable import LFSyncCrypto
@testable import LFSyncTransport
@testable import LFSyncWire
@testable import LocalFirstSyncTesting

/// A receiver that accepts an offer, answers Pings (so it looks alive), takes every
/// chunk and never sends a Receipt: the sender gives up once the silence outlasts
/// `ReceiptDeadline`, tells it with a Cancel, and the push ends — on the engine's
/// manual clock, without sleeping.
@Suite(.timeLimit(.minutes(1))) struct SilentReceiverTests {
    /// Serves one connection: accepts it and its first offer (every chunk), answers Pings,
    /// swallows the rest; returns the offer IDs it was sent a Cancel for.
    static func silentReceiver(on listener: any Listener, identity: DeviceIdentity) async throws -> [UInt64] {
        guard let channel = try await EngineHarness.rawAccept(
            on: listener, identity: identity, hello: ConnectionSetUp.hello(deviceName: "silent")) else { return [] }
        var cancelled: [UInt64] = []
        while true {
            let message: WireMessage?
            do { message = try await channel.receive() } catch { break }
            guard let message else { break }
            switch message {
            case let .offer(offer):
                try await channel.send(EngineHarness.acceptingEverything(offer))
            case let .ping(ping):
                try await channel.send(.pong(.init(nonce: ping.nonce)))
            case let .cancel(cancel):
                cancelled.append(cancel.offerID)
                await channel.close()
                return cancelled
            default:
                continue
            }
        }
        return cancelled
    }

    /// Stepped one second at a time, and ten: the watcher counts the time that passed on the
    /// engine's clock, not its wake-ups (counting wake-ups, a watcher woken late — a loaded
    /// machine, or a clock stepped faster than the task ran — gave up many times too late).
    @Test(arguments: [1, 10]) func theSenderGivesUpOnReceiptsThatNeverCome(stepSeconds: Int) async throws {
        let step = Duration.seconds(stepSeconds)
        try await TestSupport.withTemporaryDirectory { root in
            let network = InMemoryNetwork()
            let clock = ManualClock()
            let silent = DeviceIdentity.generate()
            let listener = try await network.transport(host: "silent").listen(on: PeerAddress(host: "silent", port: 7000))
            let receiver = Task { try await Self.silentReceiver(on: listener, identity: silent) }
            let laptop = try TestDevice(name: "laptop", root: root, transport: network.transport(host: "laptop"), clock: clock)
            try await laptop.sync.connect(to: listener.localAddress, expecting: silent.deviceID)
            try EngineHarness.writeSample(at: laptop.library, padding: 5_000)
            let assets = try await laptop.scan()
            let transfer = await laptop.sync.send(assets, from: laptop.library)
            let bytes = assets.reduce(UInt64(0)) { $0 + $1.totalSize }
            let allowed = ReceiptDeadline.silence(owedBytes: bytes)
            // Once the offer is answered (state .transferring) its reply timer is gone, and the only
            // sleeper that can appear on the engine's clock is the receipt watcher, waking every
            // second: step it `step` at a time until the push ends. Each phase has a real-time
            // bound of its own, so a slow first phase cannot leave the second none; the engine time
            // stepped is checked afterwards, not used as a bound, so a late give-up fails the test
            // instead of leaving it waiting for a push that never ends.
            let answered = ContinuousClock.now + .seconds(25)
            while transfer.latestUpdates.first?.state != .transferring, ContinuousClock.now < answered {
                try await Task.sleep(for: .milliseconds(5))
            }
            #expect(transfer.latestUpdates.first?.state == .transferring, "the offer was never answered")
            var waited: Duration = .zero
            let gaveUp = ContinuousClock.now + .seconds(25)
            while transfer.latestUpdates.first?.state.isFinal != true, ContinuousClock.now < gaveUp {
                if clock.sleeperCount > 0 {
                    clock.advance(by: step)
                    waited += step
                } else {
                    try await Task.sleep(for: .milliseconds(1))
                }
            }
            guard transfer.latestUpdates.first?.state.isFinal == true else {
                Issue.record("the sender never gave up: \(waited) stepped, \(allowed) allowed")
                try await transfer.cancel()
                return
            }
            #expect(waited <= allowed + step + .seconds(5), "gave up late (\(waited) stepped, \(allowed) allowed)")
            let summaries = await transfer.waitUntilCompleted()
            let summary = try #require(summaries.first)
            guard case let .failed(reason) = summary.state else {
                Issue.record("expected the push to fail for lack of receipts, got \(summary.state)")
                return
            }
            #expect(reason.contains("sent no receipt"))
            #expect(waited >= allowed, "not before the allowed silence (\(waited) < \(allowed))")
            #expect(summary.failures.values.allSatisfy { if case .timedOut = $0 { true } else { false } })
            #expect(try await receiver.value.isEmpty == false, "the receiver was told with a Cancel")
        }
    }
}
