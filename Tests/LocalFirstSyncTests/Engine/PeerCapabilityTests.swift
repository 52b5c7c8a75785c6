import Foundation
import Synchronization
import Testing
@testable import LFSyncContent
@testable import LFSyncCrypto
@testable import LocalFirstSync
@testable import LFSyncTransport
@testable import LFSyncWire
@testable import LocalFirstSyncTesting

/// What a sender may use is what the receiving peer announced in its Hello
/// (PROTOCOL.md, "Hello"). A receiver that announces nothing — another
/// implementation without zstd — must get every chunk raw, also when the same
/// push goes to a peer that does take zstd and the chunk was compressed once for it.
@Suite(.timeLimit(.minutes(1))) struct PeerCapabilityTests {
    /// What the plain receiver saw.
    final class Seen: Sendable {
        struct State {
            var encodings: [UInt8] = []
            var chunksNotMatchingTheirHash = 0
        }
        let state = Mutex(State())
    }

    /// A receiver written from the protocol alone that announces no capability:
    /// accepts every offer whole, checks each chunk against its manifest's hash,
    /// records how it was encoded, and sends a `stored` Receipt once a content
    /// has all its chunks. Runs until the connection ends.
    static func plainReceiver(on listener: any Listener, identity: DeviceIdentity, seen: Seen) async throws {
        let hello = WireMessage.Hello(protocolVersion: WireProtocol.version, deviceName: "plain", softwareVersion: "0", capabilities: [])
        guard let channel = try await EngineHarness.rawAccept(on: listener, identity: identity, hello: hello) else { return }
        var hashes: [ContentID: [[Hash256]]] = [:]
        var missing: [ContentID: Int] = [:]
        while true {
            let message: WireMessage?
            do { message = try await channel.receive() } catch { return }
            guard let message else { return }
            switch message {
            case let .offer(offer):
                for asset in offer.assets {
                    hashes[asset.contentID] = asset.files.map { $0.manifest.chunks.map(\.hash) }
                    missing[asset.contentID] = asset.files.reduce(0) { $0 + $1.manifest.chunks.count }
                }
                try await channel.send(EngineHarness.acceptingEverything(offer))
            case let .chunk(chunk):
                let expected = hashes[chunk.contentID]?[Int(chunk.fileIndex)][Int(chunk.chunkIndex)]
                let matches = (try? chunk.payload.decoded()).map { SpecHashes.chunk(Array($0)) == expected } ?? false
                seen.state.withLock { state in
                    state.encodings.append(chunk.payload.encodingByte)
                    if !matches { state.chunksNotMatchingTheirHash += 1 }
                }
                missing[chunk.contentID, default: 1] -= 1
                if missing[chunk.contentID] == 0 {
                    try await channel.send(.receipt(.init(offerID: chunk.offerID, contentID: chunk.contentID, outcome: .stored)))
                }
            case let .ping(ping):
                try await channel.send(.pong(.init(nonce: ping.nonce)))
            default:
                continue
            }
        }
    }

    /// Text compresses: the sender's reader encodes these chunks with zstd.
    static func writeCompressibleLibrary(at library: URL) throws {
        let documents = library.appendingPathComponent("Documents", isDirectory: true)
        try FileManager.default.createDirectory(at: documents, withIntermediateDirectories: true)
        for index in 0..<3 {
            let line = "\(index): the quick brown fox jumps over the lazy dog, again and again.\n"
            try Data(String(repeating: line, count: 6_000).utf8).write(to: documents.appendingPathComponent("log-\(index).txt"))
        }
    }

    @Test func aPeerWithoutZstdGetsRawChunksWhileAnotherGetsThemCompressed() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let network = InMemoryNetwork()
            let laptop = try TestDevice(name: "laptop", root: root, transport: network.transport(host: "laptop"))
            let nas = try TestDevice(name: "nas", root: root, transport: network.transport(host: "nas"), trusting: [laptop.identity])
            try await nas.start(host: "nas")
            let plainIdentity = DeviceIdentity.generate()
            let listener = try await network.transport(host: "plain").listen(on: PeerAddress(host: "plain", port: 7000))
            let seen = Seen()
            let plain = Task { try await Self.plainReceiver(on: listener, identity: plainIdentity, seen: seen) }
            defer { plain.cancel() }
            try await laptop.sync.connect(to: nas.address, expecting: nas.identity.deviceID)
            try await laptop.sync.connect(to: listener.localAddress, expecting: plainIdentity.deviceID)

            try Self.writeCompressibleLibrary(at: laptop.library)
            let assets = try await laptop.scan()
            let chunkCount = assets.reduce(0) { $0 + $1.files.reduce(0) { $0 + $1.manifest.chunks.count } }
            let rawBytes = assets.reduce(UInt64(0)) { $0 + $1.totalSize }
            let summaries = await laptop.sync.send(assets, from: laptop.library).waitUntilCompleted()

            #expect(summaries.count == 2)
            #expect(summaries.allSatisfy { $0.state == .completed && $0.assetsStored == assets.count })
            let toNas = try #require(summaries.first { $0.peer.deviceID == nas.identity.deviceID })
            let toPlain = try #require(summaries.first { $0.peer.deviceID == plainIdentity.deviceID })
            #expect(toNas.chunkBytesSent < rawBytes / 4, "the peer that announced zstd got the chunks compressed")
            #expect(toPlain.chunkBytesSent == rawBytes, "the peer that did not got every byte raw")
            let observed = seen.state.withLock { $0 }
            #expect(observed.encodings.count == chunkCount)
            #expect(observed.encodings.allSatisfy { $0 == ChunkPayload.raw([]).encodingByte }, "no zstd frame reached the plain peer")
            #expect(observed.chunksNotMatchingTheirHash == 0)
            #expect(try EngineHarness.tree(nas.library) == EngineHarness.tree(laptop.library))
        }
    }
}
