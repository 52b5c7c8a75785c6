import Foundation
import Testing
@testable import LocalFirstSync
@testable import LFSyncTCP
import LFSyncCrypto
import LFSyncStore
import LFSyncTransport

/// A device is never its own peer: dialling its own address, or an address answered by
/// another process with its own key, or expecting its own ID, fails with a clear reason
/// before any message is exchanged — otherwise it would answer its own holding checks and
/// count itself as one of its own copies.
@Suite(.timeLimit(.minutes(1))) struct SelfConnectionTests {
    @Test func aDeviceThatDialsItselfIsRefusedOnBothSides() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let device = try TestDevice(name: "laptop", root: root, transport: TCPTransport(), trusting: [])
            try await device.start(host: "127.0.0.1")
            defer { Task { await device.sync.stop() } }
            // Its own listening address.
            do {
                try await device.sync.connect(to: device.address)
                Issue.record("a device connected to itself")
            } catch {
                #expect("\(error)".contains("this device itself"), "\(error)")
            }
            // Its own ID, expected anywhere: refused before dialling.
            do {
                try await device.sync.connect(to: PeerAddress(host: "127.0.0.1", port: 1), expecting: device.identity.deviceID)
                Issue.record("a connection expecting this device's own ID was dialled")
            } catch {
                #expect("\(error)".contains("this device itself"), "\(error)")
            }
            // A second engine with the same key (the same state home, run twice) is refused too.
            let twin = LocalSync(identity: device.identity, store: try SyncStateStore.inMemory(),
                                 configuration: .init(deviceName: "twin"), transport: TCPTransport())
            do {
                try await twin.connect(to: device.address)
                Issue.record("a twin with the same key connected")
            } catch {
                #expect("\(error)".contains("this device itself"), "\(error)")
            }
            await twin.stop()
            #expect(await device.sync.connectedPeers.isEmpty)
        }
    }
}
