import Foundation
import Testing
@testable import LocalFirstSync
@testable import LFSyncTransport

/// The contract of `Transport`/`Connection`/`Listener`, run against every implementation:
/// whatever the engine relies on must hold for TCP (IPv4 and IPv6) and in memory alike.
@Suite struct TransportConformanceTests {
    typealias Support = TransportTestSupport

    @Test(arguments: TransportKind.allCases, [0, 1, 10 << 20])
    func echoRoundTrip(kind: TransportKind, size: Int) async throws {
        guard let fixture = try TransportFixture.make(kind) else { return }
        let listener = try await fixture.server.listen(on: fixture.listenAddress)
        let server = Task { try await Support.echo(try await listener.accept()) }
        let client = try await fixture.client.connect(to: listener.localAddress, timeout: .seconds(10))
        let payload = Support.pattern(size, seed: UInt64(size))
        let sender = Task { try await Support.send(payload, over: client, chunk: 1 << 20) }
        let received = try await Support.receive(size, from: client)
        try await sender.value
        #expect(received.count == size)
        #expect(Support.digest([received]) == Support.digest([payload]))
        await client.close()
        try await server.value
        await listener.close()
    }

    @Test(arguments: TransportKind.allCases)
    func manyConcurrentConnections(kind: TransportKind) async throws {
        guard let fixture = try TransportFixture.make(kind) else { return }
        let listener = try await fixture.server.listen(on: fixture.listenAddress)
        let count = 32
        let server = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<count {
                    let connection = try await listener.accept()
                    group.addTask { try await Support.echo(connection) }
                }
                try await group.waitForAll()
            }
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<count {
                group.addTask {
                    let client = try await fixture.client.connect(to: listener.localAddress, timeout: .seconds(10))
                    let payload = Support.pattern(64 << 10 + index, seed: UInt64(index) + 100)
                    async let sent: Void = Support.send(payload, over: client, chunk: 8 << 10)
                    let echoed = try await Support.receive(payload.count, from: client)
                    try await sent
                    #expect(Support.same(echoed, payload), "connection \(index)")
                    await client.close()
                }
            }
            try await group.waitForAll()
        }
        try await server.value
        await listener.close()
    }

    @Test(arguments: TransportKind.allCases)
    func endOfStreamAfterAllBytesAndSticky(kind: TransportKind) async throws {
        guard let fixture = try TransportFixture.make(kind) else { return }
        let (client, server, listener) = try await fixture.connectedPair()
        try await server.send(Array("hello".utf8))
        await server.close()
        #expect(try await Support.receiveAll(from: client) == Array("hello".utf8))
        #expect(try await client.receive() == nil)
        #expect(try await client.receive() == nil)
        await client.close()
        await listener.close()
    }

    @Test(arguments: TransportKind.allCases)
    func closeFlushesEverythingQueued(kind: TransportKind) async throws {
        guard let fixture = try TransportFixture.make(kind) else { return }
        let (client, server, listener) = try await fixture.connectedPair()
        let payload = Support.pattern(8 << 20, seed: 42)
        // Queue far more than the socket buffers hold, then close at once: the close must
        // deliver every byte before the end of stream.
        let reader = Task { try await Support.receiveAll(from: server) }
        try await Support.send(payload, over: client, chunk: 1 << 20)
        await client.close()
        let received = try await reader.value
        #expect(received.count == payload.count)
        #expect(Support.same(received, payload))
        await server.close()
        await listener.close()
    }

    @Test(arguments: TransportKind.allCases)
    func closeIsIdempotentAndEndsUse(kind: TransportKind) async throws {
        guard let fixture = try TransportFixture.make(kind) else { return }
        let (client, server, listener) = try await fixture.connectedPair()
        async let first: Void = client.close()
        async let second: Void = client.close()
        _ = await (first, second)
        await client.close()
        #expect(await Support.transportError { () async throws(TransportError) in try await client.send([1, 2, 3]) } == .closed)
        #expect(await Support.transportError { () async throws(TransportError) in try await client.receive() } == .closed)
        #expect(try await server.receive() == nil)
        await server.close()
        await server.close()
        await listener.close()
        await listener.close()
    }

    @Test(arguments: TransportKind.allCases)
    func pendingReceiveEndsWhenClosedLocally(kind: TransportKind) async throws {
        guard let fixture = try TransportFixture.make(kind) else { return }
        let (client, server, listener) = try await fixture.connectedPair()
        let pending = Task { await Support.transportError { () async throws(TransportError) in try await client.receive() } }
        try await Task.sleep(for: .milliseconds(20))
        await client.close()
        // Whether the receive was already parked or not, it ends with `.closed`.
        #expect(await pending.value == .closed)
        await server.close()
        await listener.close()
    }

    @Test(arguments: TransportKind.allCases)
    func cancellingAReceiveThrowsCancelled(kind: TransportKind) async throws {
        guard let fixture = try TransportFixture.make(kind) else { return }
        let (client, server, listener) = try await fixture.connectedPair()
        let pending = Task { await Support.transportError { () async throws(TransportError) in try await client.receive() } }
        pending.cancel()
        #expect(await pending.value == .cancelled)
        // The connection still works afterwards.
        try await server.send([7])
        #expect(try await client.receive() == [7])
        await client.close()
        await server.close()
        await listener.close()
    }

    @Test(arguments: TransportKind.allCases)
    func backpressureSuspendsASenderUntilThePeerReads(kind: TransportKind) async throws {
        guard let fixture = try TransportFixture.make(kind, .init(sendQueueLimitBytes: 1 << 20)) else { return }
        let (client, server, listener) = try await fixture.connectedPair()
        let chunk = Support.pattern(64 << 10, seed: 9)
        let chunks = 1024  // 64 MiB: far beyond the queue plus any socket buffers
        let sent = ByteCounter()
        let sender = Task {
            for _ in 0..<chunks {
                try await client.send(chunk)
                sent.add(chunk.count)
            }
        }
        // Nobody reads: the sender must come to a halt well before the end...
        var stalledAt = -1
        var lastValue = -1
        var unchangedSince = ContinuousClock.now
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
            let value = sent.current
            if value != lastValue {
                lastValue = value
                unchangedSince = .now
            } else if ContinuousClock.now - unchangedSince >= .milliseconds(400) {
                stalledAt = value
                break
            }
        }
        #expect(stalledAt >= 0, "the sender never stopped")
        #expect(stalledAt < chunks * chunk.count)
        // ...and finish once the reader drains.
        let received = try await Support.receive(chunks * chunk.count, from: server)
        try await sender.value
        #expect(sent.current == chunks * chunk.count)
        #expect(received.count == chunks * chunk.count)
        #expect(Support.digest([received]) == Support.digest(Array(repeating: chunk, count: chunks)))
        await client.close()
        await server.close()
        await listener.close()
    }

    @Test(arguments: TransportKind.allCases)
    func cancellingABlockedSendDoesNotQueueItsBytes(kind: TransportKind) async throws {
        guard let fixture = try TransportFixture.make(kind, .init(sendQueueLimitBytes: 256 << 10)) else { return }
        let (client, server, listener) = try await fixture.connectedPair()
        let chunk = [UInt8](repeating: 1, count: 64 << 10)
        let sent = ByteCounter()
        let sender = Task { () -> TransportError in
            while true {
                if let error = await Support.transportError({ () async throws(TransportError) in try await client.send(chunk) }) {
                    return error
                }
                sent.add(chunk.count)
            }
        }
        // Wait until the sender is blocked, then cancel it.
        var last = -1
        while sent.current != last {
            last = sent.current
            try await Task.sleep(for: .milliseconds(300))
        }
        sender.cancel()
        #expect(await sender.value == .cancelled)
        let marker = [UInt8](repeating: 2, count: 10)
        let finisher = Task {
            try await client.send(marker)
            await client.close()
        }
        let received = try await Support.receiveAll(from: server)
        try await finisher.value
        // Exactly the sends that returned, then the marker: the cancelled send left no trace.
        #expect(received.count == sent.current + marker.count)
        #expect(Support.same(received, [UInt8](repeating: 1, count: sent.current) + marker))
        await server.close()
        await listener.close()
    }

    @Test(arguments: TransportKind.allCases)
    func connectingWhereNobodyListensIsRefused(kind: TransportKind) async throws {
        guard let fixture = try TransportFixture.make(kind) else { return }
        let address = try await fixture.refusingAddress()
        let error = await Support.transportError { () async throws(TransportError) in
            try await fixture.client.connect(to: address, timeout: .seconds(5))
        }
        #expect(error == .connectionRefused)
    }

    @Test(arguments: TransportKind.allCases)
    func idleReceiveTimesOutAndTheConnectionSurvives(kind: TransportKind) async throws {
        guard let fixture = try TransportFixture.make(kind, .init(idleTimeout: .milliseconds(200))) else { return }
        let (client, server, listener) = try await fixture.connectedPair()
        let start = ContinuousClock.now
        let error = await Support.transportError { () async throws(TransportError) in try await client.receive() }
        let waited = ContinuousClock.now - start
        #expect(error == .timedOut(.idle))
        #expect(waited >= .milliseconds(150))
        #expect(waited < .seconds(60))  // generous: only a sanity bound on a busy machine
        try await server.send([42])
        #expect(try await client.receive() == [42])
        await client.close()
        await server.close()
        await listener.close()
    }

    @Test(arguments: TransportKind.allCases)
    func closingAListenerEndsPendingAccepts(kind: TransportKind) async throws {
        guard let fixture = try TransportFixture.make(kind) else { return }
        let listener = try await fixture.server.listen(on: fixture.listenAddress)
        let pending = Task { await Support.transportError { () async throws(TransportError) in try await listener.accept() } }
        try await Task.sleep(for: .milliseconds(20))
        await listener.close()
        #expect(await pending.value == .closed)
        #expect(await Support.transportError { () async throws(TransportError) in try await listener.accept() } == .closed)
    }

    @Test(arguments: TransportKind.allCases)
    func addressesAreReported(kind: TransportKind) async throws {
        guard let fixture = try TransportFixture.make(kind) else { return }
        let (client, server, listener) = try await fixture.connectedPair()
        #expect(listener.localAddress.port != 0)
        #expect(client.remoteAddress == listener.localAddress)
        #expect(server.remoteAddress != nil)
        await client.close()
        await server.close()
        await listener.close()
    }

    @Test func digestIsBoundaryIndependent() {
        let bytes = Support.pattern(1000, seed: 1)
        #expect(Support.digest([bytes]) == Support.digest([Array(bytes[..<3]), Array(bytes[3..<999]), Array(bytes[999...])]))
    }
}
