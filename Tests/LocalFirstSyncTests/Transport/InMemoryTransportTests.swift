import Testing
@testable import LocalFirstSync
@testable import LFSyncTransport
@testable import LocalFirstSyncTesting

/// Fault injection of the in-memory network, on a `ManualClock` where time matters: every
/// outcome here is exact, not "usually".
@Suite struct InMemoryTransportTests {
    typealias Support = TransportTestSupport

    /// A network with two devices, "laptop" connecting to a listener on "nas".
    struct Lab {
        let clock = ManualClock()
        let network: InMemoryNetwork
        let laptop: InMemoryTransport
        let nas: InMemoryTransport

        init(configuration: InMemoryTransport.Configuration = .init(idleTimeout: nil)) {
            network = InMemoryNetwork(clock: clock)
            laptop = network.transport(host: "laptop", configuration: configuration)
            nas = network.transport(host: "nas", configuration: configuration)
        }

        func pair(faults: InMemoryFaults? = nil) async throws -> (client: InMemoryConnection, server: InMemoryConnection, listener: any Listener) {
            let listener = try await nas.listen(on: PeerAddress(host: "::", port: 7000))
            if let faults { network.setFaults(faults, for: listener.localAddress) }
            async let accepted = listener.accept()
            let client = try await laptop.connect(to: PeerAddress(host: "nas", port: 7000), timeout: .seconds(5))
            return (try #require(client as? InMemoryConnection), try #require(try await accepted as? InMemoryConnection), listener)
        }
    }

    @Test func cutAfterBytesResetsAtTheExactByte() async throws {
        let lab = Lab()
        let (client, server, listener) = try await lab.pair(faults: .cutAfter(bytes: 1000, direction: .fromConnector))
        let payload = Support.pattern(1800, seed: 5)
        try await client.send(Array(payload[0..<600]))
        try await client.send(Array(payload[600..<1200]))  // crosses the cut: accepted, then the wire breaks
        #expect(await Support.transportError { () async throws(TransportError) in try await client.send(Array(payload[1200...])) } == .connectionReset)
        var received: [UInt8] = []
        var error: TransportError?
        while error == nil {
            do {
                guard let bytes = try await server.receive() else { break }
                received += bytes
            } catch let thrown {
                error = thrown
            }
        }
        #expect(received == Array(payload[0..<1000]))
        #expect(error == .connectionReset)
        #expect(await Support.transportError { () async throws(TransportError) in try await client.receive() } == .connectionReset)
        #expect(await Support.transportError { () async throws(TransportError) in try await server.send([1]) } == .connectionReset)
        await client.close()
        await server.close()
        await listener.close()
        #expect(lab.network.openConnectionCount == 0)
    }

    @Test func cutOnlyAffectsItsDirectionsCount() async throws {
        let lab = Lab()
        let (client, server, listener) = try await lab.pair(faults: .cutAfter(bytes: 10, direction: .fromListener))
        // 100 bytes upstream are fine; the 10th byte downstream cuts.
        try await client.send(Support.pattern(100, seed: 1))
        #expect(try await Support.receive(100, from: server).count == 100)
        try await server.send(Support.pattern(25, seed: 2))
        #expect(try await client.receive() == Support.pattern(10, seed: 2))
        #expect(await Support.transportError { () async throws(TransportError) in try await client.receive() } == .connectionReset)
        await listener.close()
    }

    @Test func closeAfterBytesEndsTheStreamEarly() async throws {
        let lab = Lab()
        let (client, server, listener) = try await lab.pair(faults: .closeAfter(bytes: 5, direction: .fromConnector))
        try await client.send(Array("hello, world".utf8))
        try await client.send(Array("more".utf8))  // dropped silently, as by a peer that stopped reading
        #expect(try await Support.receiveAll(from: server) == Array("hello".utf8))
        await client.close()
        await server.close()
        await listener.close()
    }

    @Test func delayHoldsDeliveryUntilTheClockAdvances() async throws {
        let lab = Lab()
        let (client, server, listener) = try await lab.pair(faults: .delay(.milliseconds(50)))
        try await client.send([1, 2, 3])
        try await client.send([4])
        let receiver = Task { try await Support.receive(4, from: server) }
        await lab.clock.waitForSleepers(count: 2)  // both deliveries in flight
        lab.clock.advance(by: .milliseconds(49))
        #expect(lab.clock.sleeperCount == 2, "nothing may arrive before 50 ms")
        lab.clock.advance(by: .milliseconds(1))
        #expect(try await receiver.value == [1, 2, 3, 4])  // in order
        await client.close()
        await server.close()
        await listener.close()
    }

    @Test func refusedUnreachableAndHangingAddresses() async throws {
        let lab = Lab()
        let listener = try await lab.nas.listen(on: PeerAddress(host: "::", port: 7000))
        let address = PeerAddress(host: "nas", port: 7000)
        func connectError(timeout: Duration = .seconds(5)) async -> TransportError? {
            await Support.transportError { () async throws(TransportError) in try await lab.laptop.connect(to: address, timeout: timeout) }
        }
        lab.network.setFaults(.refuse, for: address)
        #expect(await connectError() == .connectionRefused)
        lab.network.setFaults(.unreachable, for: address)
        #expect(await connectError() == .hostUnreachable)
        lab.network.setFaults(.hang, for: address)
        let hanging = Task { await connectError(timeout: .seconds(3)) }
        await lab.clock.waitForSleepers(count: 1)
        lab.clock.advance(by: .seconds(3))
        #expect(await hanging.value == .timedOut(.connect))
        lab.network.removeFaults(for: address)
        #expect(await connectError() == nil)
        #expect(await Support.transportError { () async throws(TransportError) in
            try await lab.laptop.connect(to: PeerAddress(host: "desktop", port: 7000), timeout: .seconds(1))
        } == .connectionRefused)
        await listener.close()
    }

    @Test func idleTimeoutRunsOnTheNetworkClock() async throws {
        let lab = Lab(configuration: .init(idleTimeout: .seconds(30)))
        let (client, server, listener) = try await lab.pair()
        let receive = Task { await Support.transportError { () async throws(TransportError) in try await client.receive() } }
        await lab.clock.waitForSleepers(count: 1)
        lab.clock.advance(by: .seconds(30))
        #expect(await receive.value == .timedOut(.idle))
        await client.close()
        await server.close()
        await listener.close()
    }

    @Test func resettingAnAddressBreaksItsConnections() async throws {
        let lab = Lab()
        let (client, server, listener) = try await lab.pair()
        lab.network.resetConnections(to: listener.localAddress)
        #expect(await Support.transportError { () async throws(TransportError) in try await client.receive() } == .connectionReset)
        #expect(await Support.transportError { () async throws(TransportError) in try await server.send([1]) } == .connectionReset)
        await listener.close()
    }

    @Test func liveFaultInjectionOnAConnection() async throws {
        let lab = Lab()
        let (client, server, listener) = try await lab.pair()
        try await client.send([1, 2, 3])
        client.inject(.cutAfter(bytes: 5, direction: .fromConnector))  // counts from the start
        try await client.send([4, 5, 6, 7])
        #expect(try await Support.receive(5, from: server) == [1, 2, 3, 4, 5])
        #expect(await Support.transportError { () async throws(TransportError) in try await server.receive() } == .connectionReset)
        await listener.close()
    }

    @Test func smallReceiveChunksSplitMessages() async throws {
        let lab = Lab(configuration: .init(idleTimeout: nil, receiveChunkSize: 1))
        let (client, server, listener) = try await lab.pair()
        try await client.send([1, 2, 3])
        #expect(try await server.receive() == [1])
        #expect(try await server.receive() == [2])
        #expect(try await server.receive() == [3])
        await listener.close()
    }

    @Test func devicesSeeEachOthersNames() async throws {
        let lab = Lab()
        let (client, server, listener) = try await lab.pair()
        #expect(listener.localAddress == PeerAddress(host: "nas", port: 7000))
        #expect(client.remoteAddress == PeerAddress(host: "nas", port: 7000))
        #expect(server.remoteAddress?.host == "laptop")
        #expect(server.remoteAddress == client.localAddress)
        // "localhost" is the device itself: the laptop has no listener.
        #expect(await Support.transportError { () async throws(TransportError) in
            try await lab.laptop.connect(to: PeerAddress(host: "localhost", port: 7000), timeout: .seconds(1))
        } == .connectionRefused)
        #expect(await Support.transportError { () async throws(TransportError) in
            try await lab.nas.listen(on: PeerAddress(host: "nas", port: 7000))
        } == .addressInUse)
        await listener.close()
    }

    @Test func droppedHandlesAndListenersReleaseEverything() async throws {
        let lab = Lab()
        do {
            let (client, server, listener) = try await lab.pair()
            try await client.send([1])
            _ = try await server.receive()
            #expect(lab.network.openConnectionCount == 1)
            _ = listener
        }
        #expect(lab.network.openConnectionCount == 0)
        // The dropped listener released its address.
        let again = try await lab.nas.listen(on: PeerAddress(host: "::", port: 7000))
        await again.close()
    }

    @Test func closingAListenerResetsUnacceptedConnections() async throws {
        let lab = Lab()
        let listener = try await lab.nas.listen(on: PeerAddress(host: "::", port: 7000))
        let client = try await lab.laptop.connect(to: listener.localAddress, timeout: .seconds(1))
        await listener.close()
        #expect(await Support.transportError { () async throws(TransportError) in try await client.receive() } == .connectionReset)
        await client.close()
        #expect(lab.network.openConnectionCount == 0)
    }
}
