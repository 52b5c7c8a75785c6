import Testing
@testable import LocalFirstSync
@testable import LFSyncDiscovery
@testable import LocalFirstSyncTesting

@Suite struct InMemoryDiscoveryTests {
    typealias Support = DiscoveryTestSupport

    @Test func advertisementIsFoundThenLostAfterCancel() async throws {
        let network = InMemoryDiscoveryNetwork()
        let laptop = network.makeDiscovery(host: "laptop", localDeviceID: "LAPTOP")
        let nas = network.makeDiscovery(host: "nas", localDeviceID: "NAS")
        var events = laptop.events().makeAsyncIterator()

        let handle = try await nas.advertise(Support.advertisement("NAS", port: 7001, deviceID: "NAS", version: 3))
        #expect(handle.registeredName == "NAS")
        #expect(await events.next() == .found(DiscoveredPeer(
            instanceName: "NAS", deviceID: "NAS", protocolVersion: 3, host: "nas", port: 7001)))

        await handle.cancel()
        #expect(await events.next() == .lost(instanceName: "NAS"))
        await handle.cancel()  // idempotent
        #expect(network.advertisedNames.isEmpty)
    }

    @Test func releasingTheHandleWithdraws() async throws {
        let network = InMemoryDiscoveryNetwork()
        let observer = network.makeDiscovery()
        var events = observer.events().makeAsyncIterator()
        _ = try await network.makeDiscovery().advertise(Support.advertisement("gone", deviceID: "G"))
        #expect(await events.next().map(Self.kind) == "found gone")
        #expect(await events.next() == .lost(instanceName: "gone"))
    }

    @Test func aNewStreamGetsCurrentAdvertisementsInOrder() async throws {
        let network = InMemoryDiscoveryNetwork()
        let first = try await network.makeDiscovery().advertise(Support.advertisement("first", deviceID: "1"))
        let second = try await network.makeDiscovery().advertise(Support.advertisement("second", deviceID: "2"))
        let events = await Support.firstEvents(network.makeDiscovery().events(), count: 2)
        #expect(events?.map(Self.kind) == ["found first", "found second"])
        _ = (first, second)
    }

    @Test func ownAdvertisementsAndOwnDeviceAreNotReported() async throws {
        let network = InMemoryDiscoveryNetwork()
        let me = network.makeDiscovery(localDeviceID: "ME")
        var events = me.events().makeAsyncIterator()
        let mine = try await me.advertise(Support.advertisement("mine", deviceID: "ME"))
        // Another process of the same device (same ID, other participant): also hidden.
        let sibling = try await network.makeDiscovery().advertise(Support.advertisement("sibling", deviceID: "ME"))
        let other = try await network.makeDiscovery().advertise(Support.advertisement("other", deviceID: "OTHER"))
        #expect(await events.next().map(Self.kind) == "found other")
        _ = (mine, sibling, other)
    }

    @Test func conflictingNamesAreRenamedLikeAvahi() async throws {
        let network = InMemoryDiscoveryNetwork()
        let a = try await network.makeDiscovery().advertise(Support.advertisement("laptop", deviceID: "A"))
        let b = try await network.makeDiscovery().advertise(Support.advertisement("laptop", deviceID: "B"))
        let c = try await network.makeDiscovery().advertise(Support.advertisement("laptop", deviceID: "C"))
        #expect([a.registeredName, b.registeredName, c.registeredName] == ["laptop", "laptop #2", "laptop #3"])
        #expect(b.advertisement.instanceName == "laptop")
    }

    @Test func serviceTypesAreSeparate() async throws {
        let network = InMemoryDiscoveryNetwork()
        let otherType = try DiscoveryServiceType("lfsync-test")
        var events = network.makeDiscovery(serviceType: otherType).events().makeAsyncIterator()
        let ignored = try await network.makeDiscovery().advertise(Support.advertisement("default", deviceID: "D"))
        let seen = try await network.makeDiscovery(serviceType: otherType)
            .advertise(Support.advertisement("test", deviceID: "T"))
        #expect(await events.next().map(Self.kind) == "found test")
        _ = (ignored, seen)
    }

    @Test func unavailableNetworkEndsStreamsAndRefusesAdvertising() async throws {
        let network = InMemoryDiscoveryNetwork()
        let device = network.makeDiscovery()
        let open = device.events()
        network.makeUnavailable(reason: "avahi-daemon crashed")
        #expect(await Support.allEvents(open) == [.unavailable(reason: "avahi-daemon crashed")])
        #expect(await Support.allEvents(device.events()) == [.unavailable(reason: "avahi-daemon crashed")])
        await #expect(throws: DiscoveryError.unavailable(reason: "avahi-daemon crashed")) {
            try await device.advertise(Support.advertisement("x", deviceID: "X"))
        }

        network.makeAvailable()
        var events = device.events().makeAsyncIterator()
        let handle = try await network.makeDiscovery().advertise(Support.advertisement("back", deviceID: "B"))
        #expect(await events.next().map(Self.kind) == "found back")
        _ = handle
    }

    @Test func invalidAdvertisementsAreRejected() async {
        let device = InMemoryDiscoveryNetwork().makeDiscovery()
        let invalid = [
            Support.advertisement("", deviceID: "X"),
            Support.advertisement(String(repeating: "n", count: 64), deviceID: "X"),
            Support.advertisement("tab\tname", deviceID: "X"),
            Support.advertisement("zero", port: 0, deviceID: "X"),
            Support.advertisement("id", deviceID: ""),
            Support.advertisement("id", deviceID: "has space"),
            Support.advertisement("id", deviceID: String(repeating: "A", count: 129)),
        ]
        for advertisement in invalid {
            await #expect(throws: DiscoveryError.self, "\(advertisement)") {
                try await device.advertise(advertisement)
            }
        }
        // The limits themselves are fine.
        let longest = Support.advertisement(String(repeating: "é", count: 31), deviceID: String(repeating: "A", count: 128))
        #expect(throws: Never.self) { try longest.validate() }
    }

    @Test func droppedStreamsUnsubscribe() async throws {
        let network = InMemoryDiscoveryNetwork()
        for _ in 0..<10 { _ = network.makeDiscovery().events() }
        #expect(network.subscriberCount == 0)
        // Yielding to (released) subscribers must be harmless; a live one still works.
        var events = network.makeDiscovery().events().makeAsyncIterator()
        let handle = try await network.makeDiscovery().advertise(Support.advertisement("x", deviceID: "X"))
        #expect(await events.next().map(Self.kind) == "found x")
        _ = handle
    }

    static func kind(_ event: DiscoveryEvent) -> String {
        switch event {
        case let .found(peer): "found \(peer.instanceName)"
        case let .lost(name): "lost \(name)"
        case let .unavailable(reason): "unavailable \(reason)"
        }
    }
}
