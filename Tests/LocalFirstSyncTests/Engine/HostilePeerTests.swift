import Foundation
import Testing
@testable import LFSyncFixtures
@testable import LocalFirstSync
@testable import LFSyncContent
@testable import LFSyncCrypto
@testable import LFSyncWire
@testable import LocalFirstSyncTesting

/// A peer speaking the real protocol with malicious content: it gets a typed
/// refusal, nothing is written outside the library, and the receiver keeps serving.
@Suite(.timeLimit(.minutes(2))) struct HostilePeerTests {
    /// A raw client that did the handshake and Hello exchange itself, so it can send anything.
    struct RawPeer {
        let channel: SecureChannel

        static func connect(to device: TestDevice, network: InMemoryNetwork, identity: DeviceIdentity) async throws -> RawPeer {
            let connection = try await network.transport(host: "mallory").connect(to: device.address, timeout: .seconds(5))
            let channel = try await SecureChannel.initiate(over: connection, identity: identity, expectedPeer: device.identity.deviceID)
            try await channel.send(.hello(.init(protocolVersion: WireProtocol.version, deviceName: "mallory", softwareVersion: "0", capabilities: [])))
            guard case .hello? = try await channel.receive(), case let .connectionDecision(decision)? = try await channel.receive(), decision.accepted else {
                throw SyncError.declined(reason: "not accepted")
            }
            return RawPeer(channel: channel)
        }

        /// Reads until the first receipt for `offerID` (or the end of the connection).
        func receipt(for offerID: UInt64) async throws -> WireMessage.Receipt.Outcome? {
            while let message = try await channel.receive() {
                if case let .receipt(receipt) = message, receipt.offerID == offerID { return receipt.outcome }
            }
            return nil
        }

        /// Reads until the reply to `offerID` (or the end of the connection).
        func reply(to offerID: UInt64) async throws -> WireMessage.OfferReply? {
            while let message = try await channel.receive() {
                if case let .offerReply(reply) = message, reply.offerID == offerID { return reply }
            }
            return nil
        }
    }

    /// A one-file asset at one placement, as an offer carries it.
    static func asset(path: String, bytes: [UInt8]) -> PlacedAsset {
        WireFixtures.placed(Asset(files: [.init(role: .primary, manifest: FileManifest(path: RelativePath(path), contents: bytes))]))
    }

    static func setUp(_ root: URL) async throws -> (InMemoryNetwork, TestDevice, DeviceIdentity) {
        let network = InMemoryNetwork()
        let mallory = DeviceIdentity.generate()
        let nas = try TestDevice(name: "nas", root: root, transport: network.transport(host: "nas"), trusting: [mallory])
        try await nas.start(host: "nas")
        return (network, nas, mallory)
    }

    @Test(arguments: ["../escaped.txt", "/tmp/absolute.txt", "a/../../escaped.txt", "ok/\u{1b}[31mred.txt", ".lfsync/staging/x", "a//b.txt"])
    func hostileNamesAreRefused(path: String) async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let (network, nas, mallory) = try await Self.setUp(root)
            let raw = try await RawPeer.connect(to: nas, network: network, identity: mallory)
            // Every one of these decodes, so each is refused (decision 2: PROTOCOL.md, "Edge
            // cases decided"), and the connection stays.
            #expect(try await Self.answer(toOfferWithPath: Array(path.utf8), from: raw) == "refused", "offer with \(path.debugDescription)")
            #expect(!FileManager.default.fileExists(atPath: root.appendingPathComponent("escaped.txt").path))
            #expect(try EngineHarness.tree(nas.library).isEmpty)
        }
    }

    /// A path longer than 4096 bytes, or not UTF-8, does not decode: Error 2, not a refusal.
    @Test(arguments: [[UInt8](repeating: 0x61, count: 4097), [0x61, 0xFF, 0xFE, 0x2E, 0x6A, 0x70, 0x67]])
    func undecodablePathsAreError2(path: [UInt8]) async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let (network, nas, mallory) = try await Self.setUp(root)
            let raw = try await RawPeer.connect(to: nas, network: network, identity: mallory)
            #expect(try await Self.answer(toOfferWithPath: path, from: raw) == "error 2")
            #expect(try EngineHarness.tree(nas.library).isEmpty)
        }
    }

    /// Sends offer 1 with one file at `path` — bytes our own encoder would refuse, so the
    /// offer is encoded with a placeholder and the bytes (and their length) put in its
    /// place — and returns how the receiver answered: "refused", "error N", or another decision.
    static func answer(toOfferWithPath path: [UInt8], from raw: RawPeer) async throws -> String? {
        let placeholder = String(repeating: "x", count: min(path.count, 4000))
        let frame = try WireMessage.offer(.init(offerID: 1, assets: [Self.asset(path: placeholder, bytes: Array("payload".utf8))])).frame()
        var payload = frame.payload
        let at = try #require(payload.indices.first { $0 >= 2 && payload[$0...].starts(with: placeholder.utf8) })
        payload.replaceSubrange(at..<at + placeholder.utf8.count, with: path)
        payload[at - 2] = UInt8(path.count >> 8)
        payload[at - 1] = UInt8(path.count & 0xFF)
        try await raw.channel.send(frames: [Frame(type: frame.type, payload: payload)])
        while let message = try? await raw.channel.receive() {
            if case let .offerReply(reply) = message, reply.offerID == 1 { return reply.decision == .refused ? "refused" : "\(reply.decision)" }
            if case let .error(error) = message { return "error \(error.code.rawValue)" }
        }
        return nil
    }

    @Test func chunkBeforeAcceptanceClosesTheConnection() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let (network, nas, mallory) = try await Self.setUp(root)
            let raw = try await RawPeer.connect(to: nas, network: network, identity: mallory)
            let bytes = Array("pushed without consent".utf8)
            let asset = Self.asset(path: "sneaky.txt", bytes: bytes)
            try await raw.channel.send([
                .chunk(.init(offerID: 9, contentID: asset.contentID, fileIndex: 0, chunkIndex: 0, payload: .raw(bytes))),
            ])
            // The receiver answers with Error 3 (PROTOCOL.md: a Chunk for an offer it did not
            // accept is an unexpected message) and hangs up.
            var codes: [WireMessage.ErrorMessage.Code] = []
            while let message = try? await raw.channel.receive() {
                if case let .error(error) = message { codes.append(error.code) }
            }
            #expect(codes == [.unexpectedMessage])
            #expect(try EngineHarness.tree(nas.library).isEmpty)
        }
    }

    /// Bytes that don't match the hashes the offer promised fail that asset with a clear
    /// receipt, land nowhere, and cost the connection nothing: the next offer goes through.
    @Test func chunkNotMatchingItsHashFailsThatAssetOnly() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let (network, nas, mallory) = try await Self.setUp(root)
            let raw = try await RawPeer.connect(to: nas, network: network, identity: mallory)
            let bytes = Array("the real bytes".utf8)
            let asset = Self.asset(path: "photo.jpg", bytes: bytes)
            try await raw.channel.send(.offer(.init(offerID: 2, assets: [asset])))
            #expect(try await raw.reply(to: 2)?.accepted == true)
            try await raw.channel.send(.chunk(.init(offerID: 2, contentID: asset.contentID, fileIndex: 0, chunkIndex: 0,
                                                    payload: .raw(Array("fake bytes!!!!".utf8)))))
            guard case let .failed(reason)? = try await raw.receipt(for: 2) else {
                Issue.record("expected a failed receipt")
                return
            }
            #expect(reason.contains("hash"), "reason: \(reason)")
            #expect(try EngineHarness.tree(nas.library).isEmpty)

            let honest = Self.asset(path: "honest.jpg", bytes: Array("honest bytes".utf8))
            try await raw.channel.send(.offer(.init(offerID: 3, assets: [honest])))
            #expect(try await raw.reply(to: 3)?.accepted == true)
            try await raw.channel.send(.chunk(.init(offerID: 3, contentID: honest.contentID, fileIndex: 0, chunkIndex: 0,
                                                    payload: .raw(Array("honest bytes".utf8)))))
            #expect(try await raw.receipt(for: 3) == .stored)
            #expect(try EngineHarness.tree(nas.library) == ["honest.jpg": Data("honest bytes".utf8)])
        }
    }

    @Test func symlinkedFolderInsideTheLibraryIsNotFollowed() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let (network, nas, mallory) = try await Self.setUp(root)
            let outside = root.appendingPathComponent("outside")
            try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: nas.library.appendingPathComponent("Photos").path, withDestinationPath: outside.path)
            let raw = try await RawPeer.connect(to: nas, network: network, identity: mallory)
            let bytes = Array("should never leave the library".utf8)
            let asset = Self.asset(path: "Photos/evil.jpg", bytes: bytes)
            try await raw.channel.send(.offer(.init(offerID: 3, assets: [asset])))
            let reply = try await raw.reply(to: 3)
            if reply?.accepted == true {
                try await raw.channel.send(.chunk(.init(offerID: 3, contentID: asset.contentID, fileIndex: 0, chunkIndex: 0, payload: .raw(bytes))))
                // The receipt says it failed; nothing appears outside.
                var outcome: WireMessage.Receipt.Outcome?
                while outcome == nil, let message = try await raw.channel.receive() {
                    if case let .receipt(receipt) = message { outcome = receipt.outcome }
                }
                guard case .failed? = outcome else {
                    Issue.record("expected a failed receipt, got \(String(describing: outcome))")
                    return
                }
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path).isEmpty)
        }
    }

    /// Frames lfsync's encoder would never produce (named, so test logs don't print 16 MiB of payload).
    enum BrokenFrame: String, CaseIterable, CustomTestStringConvertible {
        case overTheFrameLimit, offerClaimingAMillionAssets, unknownMessageType

        var testDescription: String { rawValue }

        var frame: Frame {
            switch self {
            case .overTheFrameLimit:
                Frame(type: WireMessageType.chunk.rawValue, payload: [UInt8](repeating: 0, count: WireProtocol.maxPayloadLength + 1))
            case .offerClaimingAMillionAssets:
                Frame(type: WireMessageType.offer.rawValue, payload: [0, 0, 0, 0, 0, 0, 0, 1, 0, 0x0F, 0x42, 0x40])
            case .unknownMessageType:
                Frame(type: 0xEE, payload: [])
            }
        }

        var expectedCode: WireMessage.ErrorMessage.Code {
            self == .overTheFrameLimit ? .limitExceeded : .malformedMessage
        }
    }

    /// The receiver names the problem with a typed Error, then hangs up.
    @Test(arguments: BrokenFrame.allCases)
    func brokenFramesAreAnsweredWithATypedError(broken: BrokenFrame) async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let (network, nas, mallory) = try await Self.setUp(root)
            let raw = try await RawPeer.connect(to: nas, network: network, identity: mallory)
            try await raw.channel.send(frames: [broken.frame])
            var codes: [WireMessage.ErrorMessage.Code] = []
            while let message = try? await raw.channel.receive() {
                if case let .error(error) = message { codes.append(error.code) }
            }
            #expect(codes == [broken.expectedCode])
        }
    }

    @Test func receiverKeepsServingOthersAfterAHostilePeer() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let (network, nas, mallory) = try await Self.setUp(root)
            let raw = try await RawPeer.connect(to: nas, network: network, identity: mallory)
            try await raw.channel.send(.chunk(.init(offerID: 1, contentID: ContentID(hash: Blake2b.hash([])), fileIndex: 0, chunkIndex: 0, payload: .raw([1]))))
            while (try? await raw.channel.receive()) != nil {}
            // A well-behaved device still gets through.
            let laptop = try TestDevice(name: "laptop", root: root, transport: network.transport(host: "laptop"))
            try TestSupport.write(Array("hello".utf8), to: laptop.library.appendingPathComponent("a.txt"))
            // nas trusts mallory only, so a stranger needs consent: answer yes.
            let answering = Task {
                for await request in nas.sync.connectionRequests() where request.isPending {
                    try? await request.accept()
                    return
                }
            }
            let accepting = Task {
                for await offer in nas.sync.incomingTransfers() where offer.isPending {
                    _ = try? await offer.accept()
                    return
                }
            }
            try await laptop.sync.connect(to: nas.address, expecting: nas.identity.deviceID)
            await answering.value
            let summary = await laptop.sync.send(try await laptop.scan(), from: laptop.library).waitUntilCompleted()
            await accepting.value
            #expect(summary.first?.state == .completed)
            #expect(try EngineHarness.tree(nas.library)["a.txt"] == Data("hello".utf8))
        }
    }
}
