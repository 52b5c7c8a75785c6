import Testing
@testable import LocalFirstSync
@testable import LFSyncDiscovery
@testable import LocalFirstSyncTesting

@Suite struct StaticDiscoveryTests {
    @Test(arguments: [
        ("nas.lan:7000", "nas.lan", 7000),
        ("  192.168.1.20:65535\n", "192.168.1.20", 65535),
        ("[::1]:7000", "::1", 7000),
        ("[fe80::1%eth0]:7001", "fe80::1%eth0", 7001),
        ("my_box.local.:1", "my_box.local.", 1),
        ("NAS:7000", "NAS", 7000),
    ])
    func parsesAddresses(text: String, host: String, port: Int) throws {
        let address = try StaticPeerAddress(parsing: text)
        #expect(address.host == host)
        #expect(Int(address.port) == port)
    }

    @Test(arguments: [
        "", "nas", "nas:", ":7000", "nas:0", "nas:65536", "nas:7o00", "nas:+70", "nas:-1", "nas:007000",
        "::1:7000", "[::1]7000", "[::1", "[nas]:7000", "[::1%]:7000", "bad host:7000", "-nas:7000", "nas-:7000",
        "a..b:7000", "nas/x:7000", String(repeating: "a", count: 64) + ".lan:7000",
        String(repeating: "a.", count: 127) + "a:7000", "1.2.3.4.5:7000x",
    ])
    func rejectsMalformedAddresses(text: String) {
        #expect(throws: DiscoveryError.self, "\(text)") { try StaticPeerAddress(parsing: text) }
    }

    @Test func descriptionRoundTrips() throws {
        for text in ["nas.lan:7000", "10.0.0.1:1", "[::1]:7000", "[fe80::1%eth0]:9"] {
            #expect(try StaticPeerAddress(parsing: text).description == text)
        }
    }

    @Test func reportsEveryPeerOnceAndStaysOpen() async throws {
        let discovery = try StaticDiscovery(parsing: ["nas.lan:7000", "10.0.0.2:7000", "nas.lan:7000"])
        let pinned = StaticPeerAddress(host: "::1", port: 7002, deviceID: "PINNED")
        let withPinned = StaticDiscovery(peers: discovery.peers + [pinned])
        let events = await DiscoveryTestSupport.firstEvents(withPinned.events(), count: 3)
        #expect(events == [
            .found(DiscoveredPeer(
                instanceName: "nas.lan:7000", deviceID: nil, protocolVersion: nil, host: "nas.lan", port: 7000)),
            .found(DiscoveredPeer(
                instanceName: "10.0.0.2:7000", deviceID: nil, protocolVersion: nil, host: "10.0.0.2", port: 7000,
                addresses: ["10.0.0.2"])),
            .found(DiscoveredPeer(
                instanceName: "[::1]:7002", deviceID: "PINNED", protocolVersion: nil, host: "::1", port: 7002,
                addresses: ["::1"])),
        ])
        // Nothing more, and no end either: the stream stays open until dropped.
        #expect(await DiscoveryTestSupport.firstEvents(withPinned.events(), count: 4, within: .milliseconds(200)) == nil)
    }

    @Test func theFirstBadAddressIsNamed() {
        #expect(throws: DiscoveryError.invalidPeerAddress("\"nas\": expected host:port")) {
            try StaticDiscovery(parsing: ["ok.lan:1", "nas"])
        }
    }

    @Test func cannotAdvertise() async {
        await #expect(throws: DiscoveryError.self) {
            try await StaticDiscovery(peers: []).advertise(DiscoveryTestSupport.advertisement("x", deviceID: "X"))
        }
    }
}

@Suite struct MergedDiscoveryTests {
    @Test func staticPeersKeepWorkingWhenDNSSDIsUnavailable() async throws {
        let network = InMemoryDiscoveryNetwork()
        network.makeUnavailable(reason: "no avahi-daemon")
        let merged = MergedDiscovery([try StaticDiscovery(parsing: ["nas.lan:7000"]), network.makeDiscovery()])
        let events = try #require(await DiscoveryTestSupport.firstEvents(merged.events(), count: 2))
        #expect(Set(events) == [
            .unavailable(reason: "no avahi-daemon"),
            .found(DiscoveredPeer(
                instanceName: "nas.lan:7000", deviceID: nil, protocolVersion: nil, host: "nas.lan", port: 7000)),
        ])
    }

    @Test func finishesWhenEveryMemberFinished() async {
        let network = InMemoryDiscoveryNetwork()
        network.makeUnavailable(reason: "down")
        let merged = MergedDiscovery([network.makeDiscovery(), network.makeDiscovery()])
        #expect(await DiscoveryTestSupport.allEvents(merged.events()) == [
            .unavailable(reason: "down"), .unavailable(reason: "down"),
        ])
        #expect(await DiscoveryTestSupport.allEvents(MergedDiscovery([]).events()) == [])
    }

    @Test func advertisesThroughMembersThatCan() async throws {
        let network = InMemoryDiscoveryNetwork()
        var events = network.makeDiscovery().events().makeAsyncIterator()
        let merged = MergedDiscovery([StaticDiscovery(peers: []), network.makeDiscovery(host: "me")])
        let handle = try await merged.advertise(DiscoveryTestSupport.advertisement("me", deviceID: "ME"))
        #expect(handle.registeredName == "me")
        #expect(await events.next().map(InMemoryDiscoveryTests.kind) == "found me")
        await handle.cancel()
        #expect(await events.next() == .lost(instanceName: "me"))

        await #expect(throws: DiscoveryError.unsupported("no member of this discovery can advertise")) {
            try await MergedDiscovery([StaticDiscovery(peers: [])])
                .advertise(DiscoveryTestSupport.advertisement("x", deviceID: "X"))
        }
    }
}
