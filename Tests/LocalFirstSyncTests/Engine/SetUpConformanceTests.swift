import Foundation
import Testing
@testable import LocalFirstSync
@testable import LFSyncCrypto
@testable import LFSyncSystem
@testable import LFSyncWire
@testable import LocalFirstSyncTesting

/// What a responder answers to a peer that breaks the rules before or around
/// the connection decision (PROTOCOL.md, "Session flow" and "Error"): an
/// Error with the code the spec gives, then the connection closes — never a
/// silent hang-up, never a buffer sized by a stranger.
@Suite(.timeLimit(.minutes(2))) struct SetUpConformanceTests {
    static func responder(_ root: URL, network: InMemoryNetwork, trusting: [DeviceIdentity] = [], autoAccept: Bool = true) async throws -> TestDevice {
        let nas = try TestDevice(name: "nas", root: root, transport: network.transport(host: "nas"), trusting: trusting,
                                 autoAcceptOffers: autoAccept)
        try await nas.start(host: "nas")
        return nas
    }

    /// Handshakes with `device` and sends `frames` first thing; returns the Error code the responder sent, if any.
    static func errorCode(afterSending frames: [Frame], to device: TestDevice, network: InMemoryNetwork,
                          as identity: DeviceIdentity = .generate()) async throws -> WireMessage.ErrorMessage.Code? {
        let connection = try await network.transport(host: "mallory").connect(to: device.address, timeout: .seconds(5))
        let channel = try await SecureChannel.initiate(over: connection, identity: identity, expectedPeer: device.identity.deviceID)
        try await channel.send(frames: frames)
        do {
            while let message = try await channel.receive() {
                if case let .error(error) = message { return error.code }
            }
        } catch {}
        return nil
    }

    static func helloPayload(version: UInt16 = WireProtocol.version, name: String = "mallory", trailing: [UInt8] = []) -> [UInt8] {
        var writer = ByteWriter()
        writer.write(version)
        writer.writeString(name)
        writer.writeString("0.0")
        writer.write(UInt32(0))
        return writer.bytes + trailing
    }

    static let helloType = WireMessageType.hello.rawValue

    @Test func anOfferBeforeHelloGetsError3() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let network = InMemoryNetwork()
            let nas = try await Self.responder(root, network: network)
            let offer = try WireMessage.offer(.init(offerID: 1, push: .init(pushID: 1, isLast: true, fileCount: 0, byteCount: 0), assets: [])).frame()
            #expect(try await Self.errorCode(afterSending: [offer], to: nas, network: network) == .unexpectedMessage)
        }
    }

    @Test func aHelloOfAnotherVersionGetsError1() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let network = InMemoryNetwork()
            let nas = try await Self.responder(root, network: network)
            let hello = Frame(type: Self.helloType, payload: Self.helloPayload(version: WireProtocol.version + 1))
            #expect(try await Self.errorCode(afterSending: [hello], to: nas, network: network) == .unsupportedProtocolVersion)
        }
    }

    @Test(arguments: ["bidi\u{202E}gpj.exe", "bell\u{7}", "nul\u{0}"])
    func aHelloWithForbiddenTextGetsError2(name: String) async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let network = InMemoryNetwork()
            let nas = try await Self.responder(root, network: network)
            let hello = Frame(type: Self.helloType, payload: Self.helloPayload(name: name))
            #expect(try await Self.errorCode(afterSending: [hello], to: nas, network: network) == .malformedMessage)
        }
    }

    @Test func aHelloWithTrailingBytesGetsError2() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let network = InMemoryNetwork()
            let nas = try await Self.responder(root, network: network)
            let hello = Frame(type: Self.helloType, payload: Self.helloPayload(trailing: [0, 0, 0]))
            #expect(try await Self.errorCode(afterSending: [hello], to: nas, network: network) == .malformedMessage)
        }
    }

    /// Before the decision nobody has consented to anything: a frame larger than
    /// any set-up message is refused from its header, not buffered.
    @Test func aLargeFrameBeforeTheDecisionGetsError5() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let network = InMemoryNetwork()
            let nas = try await Self.responder(root, network: network)
            let big = Frame(type: Self.helloType, payload: [UInt8](repeating: 0, count: WireProtocol.setUpFrameLimit + 1))
            #expect(try await Self.errorCode(afterSending: [big], to: nas, network: network) == .limitExceeded)
        }
    }

    /// Session flow 8: a Pull from a device trusted to connect but not to pull is
    /// refused with Error 4 (not accepted), and nothing is offered.
    @Test func aPullFromADeviceNotTrustedToPullGetsError4() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let network = InMemoryNetwork()
            let stranger = DeviceIdentity.generate()
            let nas = try await Self.responder(root, network: network, trusting: [stranger], autoAccept: false)
            await nas.sync.servePulls(from: nas.library) { _ in [] }
            let (channel, decision) = try await EngineHarness.rawSetUp(with: nas, network: network, as: stranger, host: "stranger")
            #expect(decision.accepted)
            try await channel.send(.pull(.init(requestID: 7)))
            var code: WireMessage.ErrorMessage.Code?
            do {
                while let message = try await channel.receive() {
                    if case .offer = message { Issue.record("an offer was sent to a device not trusted to pull") }
                    if case let .error(error) = message { code = error.code }
                }
            } catch {}
            #expect(code == .notAccepted)
        }
    }
}
