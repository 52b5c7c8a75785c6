import Foundation
import Testing
@testable import LocalFirstSync
@testable import LFSyncCrypto
@testable import LFSyncSystem
@testable import LFSyncWire
@testable import LocalFirstSyncTesting
import LFSyncContent
import LFSyncStore
import LFSyncTransport
import LFSyncTCP
import LFSyncDiscovery

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

    static func helloPayload(version: UInt16 = WireProtocol.version, name: String = "mallory", capabilities: UInt32 = 0,
                             trailing: [UInt8] = []) -> [UInt8] {
        var writer = ByteWriter()
        writer.write(version)
        writer.writeString(name)
        writer.writeString("0.0")
        writer.write(capabilities)
        return writer.bytes + trailing
    }

    /// A trusted device past the decision, as a raw channel, its Hello announcing `capabilities`.
    static func acceptedChannel(to nas: TestDevice, network: InMemoryNetwork, as identity: DeviceIdentity,
                                capabilities: UInt32) async throws -> (SecureChannel, any Connection) {
        let connection = try await network.transport(host: "mallory").connect(to: nas.address, timeout: .seconds(5))
        let channel = try await SecureChannel.initiate(over: connection, identity: identity, expectedPeer: nas.identity.deviceID)
        try await channel.send(frames: [Frame(type: Self.helloType, payload: Self.helloPayload(capabilities: capabilities))])
        guard case .hello? = try await channel.receive(), case let .connectionDecision(decision)? = try await channel.receive(), decision.accepted else {
            throw SyncError.protocolViolation("not accepted")
        }
        return (channel, connection)
    }

    /// Everything the responder sends until it closes: the Error code, if any.
    static func errorCode(on channel: SecureChannel) async -> WireMessage.ErrorMessage.Code? {
        do {
            while let message = try await channel.receive() {
                if case let .error(error) = message { return error.code }
            }
        } catch {}
        return nil
    }

    /// PROTOCOL.md, Session flow 10: holding checks only from a peer whose Hello announced
    /// capability bit 2 — one that said it does not speak them breaks the rule (Error 3).
    @Test func aHoldingCheckFromAPeerThatDidNotAnnounceHoldingsGetsError3() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let network = InMemoryNetwork()
            let identity = DeviceIdentity.generate()
            let nas = try await Self.responder(root, network: network, trusting: [identity])
            let (channel, _) = try await Self.acceptedChannel(to: nas, network: network, as: identity, capabilities: 0)
            let check = try ProtocolDocumentTests.hexExample("holding-check-frame")
            try await channel.send(frames: [Frame(type: check[0], payload: Array(check[5...]))])
            #expect(await Self.errorCode(on: channel) == .unexpectedMessage)
        }
    }

    /// The same section: an answer to no question waiting (a late one, its asker gone) is
    /// ignored, not a violation — the connection goes on (a Ping is still answered).
    @Test func anAnswerToNothingAskedIsIgnored() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let network = InMemoryNetwork()
            let identity = DeviceIdentity.generate()
            let nas = try await Self.responder(root, network: network, trusting: [identity])
            let (channel, _) = try await Self.acceptedChannel(to: nas, network: network, as: identity,
                                                              capabilities: WireCapabilities.holdings.rawValue)
            try await channel.send([.holdingReport(.init(requestID: 77, answers: [.notHeld])), .chunkReply(.init(requestID: 78, outcome: .notHeld)),
                                    .ping(.init(nonce: 5))])
            guard case let .pong(pong)? = try await channel.receive() else { Issue.record("no Pong after unasked answers"); return }
            #expect(pong.nonce == 5)
        }
    }

    /// "Error", the one rule: a Noise transport message that fails authentication is a
    /// violation with a code (2), not a silent hang-up; only a connection that failed gets none.
    @Test func aTamperedNoiseMessageGetsError2() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let network = InMemoryNetwork()
            let identity = DeviceIdentity.generate()
            let nas = try await Self.responder(root, network: network, trusting: [identity])
            let (channel, connection) = try await Self.acceptedChannel(to: nas, network: network, as: identity,
                                                                       capabilities: WireCapabilities.holdings.rawValue)
            // A Noise message of 40 bytes that no key made: its tag cannot match.
            try await connection.send([0, 40] + [UInt8](repeating: 0xA5, count: 40))
            #expect(await Self.errorCode(on: channel) == .malformedMessage)
        }
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

    /// Session flow 2, "Nothing else is sent before the decision", as PROTOCOL.md's example
    /// has it: a trusted device's HoldingCheck (`holding-check-frame`) sent in the same Noise
    /// message as its Hello is answered with the `error-before-decision-frame` Error, not a
    /// HoldingReport.
    @Test func aHoldingCheckSentWithTheHelloGetsError3() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let network = InMemoryNetwork()
            let identity = DeviceIdentity.generate()
            let nas = try await Self.responder(root, network: network, trusting: [identity])
            let check = try ProtocolDocumentTests.hexExample("holding-check-frame")
            let expected = try ProtocolDocumentTests.hexExample("error-before-decision-frame")
            let connection = try await network.transport(host: "mallory").connect(to: nas.address, timeout: .seconds(5))
            let channel = try await SecureChannel.initiate(over: connection, identity: identity, expectedPeer: nas.identity.deviceID)
            let hello = Frame(type: Self.helloType, payload: Self.helloPayload())
            try await channel.send(frames: [hello, Frame(type: check[0], payload: Array(check[5...]))])
            var received: [WireMessage] = []
            do { while let message = try await channel.receive() { received.append(message) } } catch {}
            #expect(received.count == 2, "\(received.map(\.type))")
            guard case .hello? = received.first, case let .error(error)? = received.last else {
                Issue.record("expected Hello, then Error: \(received.map(\.type))")
                return
            }
            #expect(try WireMessage.error(error).frame().encoded() == expected)
        }
    }

    /// The same rule while a person is asked: a Pull (`pull-frame`) from a device that is not
    /// trusted yet gets Error 3 — not Error 4, "not allowed to pull", as if it came after.
    @Test func aPullSentWhileAPersonDecidesGetsError3() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let network = InMemoryNetwork()
            let nas = try await Self.responder(root, network: network)
            let pull = try ProtocolDocumentTests.hexExample("pull-frame")
            let connection = try await network.transport(host: "mallory").connect(to: nas.address, timeout: .seconds(5))
            let channel = try await SecureChannel.initiate(over: connection, identity: .generate(), expectedPeer: nas.identity.deviceID)
            try await channel.send(frames: [Frame(type: Self.helloType, payload: Self.helloPayload())])
            guard case .hello? = try await channel.receive() else { Issue.record("no Hello"); return }
            // A person is being asked now.
            var requests = nas.sync.connectionRequests().makeAsyncIterator()
            let request = try #require(await requests.next())
            #expect(request.isPending)
            try await channel.send(frames: [Frame(type: pull[0], payload: Array(pull[5...]))])
            var error: WireMessage.ErrorMessage?
            do {
                while let message = try await channel.receive() {
                    if case let .error(reply) = message { error = reply }
                    if case .connectionDecision = message { Issue.record("a decision came after a message sent before it") }
                }
            } catch {}
            #expect(error?.code == .unexpectedMessage, "\(String(describing: error))")
            #expect(!request.isPending, "the person is still asked about a connection that was dropped")
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

    /// An lfsync of protocol version 2 opens with its `lfsync/2` offer and a version-2
    /// Hello: it is answered, not dropped, and told with Error 1 which version this side
    /// speaks — what its user sees instead of a connection that just closes.
    @Test func aVersion2PeerIsToldWhichVersionThisSideSpeaks() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let network = InMemoryNetwork()
            let nas = try await Self.responder(root, network: network)
            let connection = try await network.transport(host: "old").connect(to: nas.address, timeout: .seconds(5))
            let channel = try await SecureChannel.initiate(
                over: connection, identity: .generate(), expectedPeer: nas.identity.deviceID, protocolTag: Array("lfsync/2".utf8))
            try await channel.send(frames: [Frame(type: Self.helloType, payload: Self.helloPayload(version: 2))])
            var error: WireMessage.ErrorMessage?
            do {
                while let message = try await channel.receive() {
                    if case let .error(reply) = message { error = reply }
                }
            } catch {}
            #expect(error?.code == .unsupportedProtocolVersion)
            #expect(error?.message.contains("protocol version 2 is not supported") == true)
            #expect(error?.message.contains("speaks version 3") == true)
        }
    }

    /// The other way round: a version-2 responder closes on our `lfsync/3` offer without a
    /// word (it accepts only its own tag), and the dialler says what that likely means.
    @Test func aResponderThatClosesAtTheOfferIsNamedAnOlderVersion() async throws {
        let network = InMemoryNetwork()
        let transport = network.transport(host: "new")
        let listener = try await network.transport(host: "old").listen(on: PeerAddress(host: "old", port: 9))
        let closer = Task {
            let connection = try await listener.accept()
            var framer = NoiseMessageFramer()
            while framer.next() == nil, let bytes = try await connection.receive() { framer.append(bytes) }
            await connection.close()
        }
        let connection = try await transport.connect(to: listener.localAddress, timeout: .seconds(5))
        await #expect {
            _ = try await SecureChannel.initiate(over: connection, identity: .generate())
        } throws: { error in
            guard case let .incompatiblePeer(detail)? = error as? SecureChannelError else { return false }
            return detail.contains("protocol version 2")
        }
        try await closer.value
        await listener.close()
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
