import Testing
@testable import LocalFirstSync
@testable import LFSyncDiscovery

/// DNS-SD on this host, where no avahi-daemon runs (and none may be started:
/// the real thing is tested in `DiscoveryLabTests`, inside namespaces).
@Suite struct DNSSDDiscoveryTests {
    typealias Support = DiscoveryTestSupport

    @Test(.enabled(if: !Support.avahiDaemonIsRunning, "an avahi-daemon runs here; this test needs its absence"))
    func browsingWithoutDaemonReportsUnavailableAndFinishes() async throws {
        let discovery = DNSSDDiscovery()
        let events = try #require(await Support.allEvents(discovery.events(), within: .seconds(10)),
                                  "the stream neither reported nor finished")
        #expect(events.count == 1)
        guard case let .unavailable(reason) = events.first else {
            Issue.record("expected .unavailable, got \(events)")
            return
        }
        #expect(reason.contains("avahi-daemon is not running"))
        #expect(reason.contains("-65537"))
        await Self.expectLoopStops(discovery)
    }

    @Test(.enabled(if: !Support.avahiDaemonIsRunning, "an avahi-daemon runs here; this test needs its absence"))
    func advertisingWithoutDaemonThrowsUnavailable() async {
        let discovery = DNSSDDiscovery()
        do {
            let handle = try await discovery.advertise(Support.advertisement("nobody", deviceID: "X"))
            Issue.record("registered \(handle.registeredName) without a daemon")
        } catch {
            guard case let .unavailable(reason) = error else {
                Issue.record("expected .unavailable, got \(error)")
                return
            }
            #expect(reason.contains("avahi-daemon"))
        }
        await Self.expectLoopStops(discovery)
    }

    @Test(.enabled(if: !Support.avahiDaemonIsRunning, "an avahi-daemon runs here; this test needs its absence"))
    func manyStreamsStartedAndDroppedLeaveNothingRunning() async {
        let discovery = DNSSDDiscovery()
        for _ in 0..<20 { _ = discovery.events() }
        let kept = (0..<5).map { _ in discovery.events() }
        for stream in kept {
            let events = await Support.allEvents(stream)
            #expect(events?.count == 1)
        }
        await Self.expectLoopStops(discovery)
    }

    @Test func invalidAdvertisementsFailBeforeTouchingAvahi() async {
        await #expect(throws: DiscoveryError.self) {
            try await DNSSDDiscovery().advertise(Support.advertisement("", deviceID: "X"))
        }
    }

    @Test func addressRecordsAreFormatted() {
        let a: [UInt8] = [10, 231, 0, 1]
        #expect(DNSSDInstance.addressText(recordType: 1, rdata: a, interfaceIndex: 0) == "10.231.0.1")
        let global: [UInt8] = [0x20, 0x01, 0x0d, 0xb8] + Array(repeating: 0, count: 11) + [1]
        #expect(DNSSDInstance.addressText(recordType: 28, rdata: global, interfaceIndex: 1) == "2001:db8::1")
        let linkLocal: [UInt8] = [0xfe, 0x80] + Array(repeating: 0, count: 13) + [1]
        // Interface 1 is the loopback interface in every network namespace.
        #expect(DNSSDInstance.addressText(recordType: 28, rdata: linkLocal, interfaceIndex: 1) == "fe80::1%lo")
        #expect(DNSSDInstance.addressText(recordType: 28, rdata: linkLocal, interfaceIndex: 0) == "fe80::1")
        // Wrong sizes and other record types are dropped, not trusted.
        #expect(DNSSDInstance.addressText(recordType: 1, rdata: [1, 2, 3], interfaceIndex: 0) == nil)
        #expect(DNSSDInstance.addressText(recordType: 1, rdata: global, interfaceIndex: 0) == nil)
        #expect(DNSSDInstance.addressText(recordType: 28, rdata: a, interfaceIndex: 0) == nil)
        #expect(DNSSDInstance.addressText(recordType: 16, rdata: a, interfaceIndex: 0) == nil)
    }

    @Test func addressesAreOrderedForConnecting() {
        #expect(DNSSDInstance.ordered(["fe80::1%eth0", "2001:db8::1", "10.0.0.1", "fe80::2%eth0", "10.0.0.2"])
            == ["10.0.0.1", "10.0.0.2", "2001:db8::1", "fe80::1%eth0", "fe80::2%eth0"])
    }

    /// The pump thread ends once nothing is left to watch.
    static func expectLoopStops(_ discovery: DNSSDDiscovery) async {
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(5)
        while discovery.loop.isRunning, clock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        #expect(!discovery.loop.isRunning, "the DNS-SD thread is still running")
    }
}
