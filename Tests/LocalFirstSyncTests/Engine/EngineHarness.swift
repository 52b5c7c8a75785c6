import Foundation
@testable import LFSyncFixtures
@testable import LocalFirstSync
@testable import LFSyncContent
@testable import LFSyncCrypto
@testable import LFSyncStore
@testable import LFSyncTransport
@testable import LFSyncWire
@testable import LocalFirstSyncTesting

/// Devices for engine tests: each has an identity, a ledger, a library
/// folder and a `LocalSync`, all on one in-memory network (or real TCP).
final class TestDevice: @unchecked Sendable {
    let name: String
    let identity = DeviceIdentity.generate()
    let store: SyncStateStore
    let library: URL
    let chunkIndex: ChunkIndex
    let scanCache: ScanCache
    let sync: LocalSync
    var address: PeerAddress!

    /// - Parameter allowPulls: whether the devices in `trusting` may also pull (never implied by `autoAcceptOffers`).
    init(name: String, root: URL, transport: any Transport, trusting: [DeviceIdentity] = [], autoAcceptOffers: Bool = true,
         allowPulls: Bool = false, decisionTimeout: Duration = .seconds(30),
         offerReplyTimeout: Duration = WireProtocol.consentWait, clock: any Clock<Duration> = ContinuousClock()) throws {
        self.name = name
        store = try SyncStateStore.inMemory()
        library = root.appendingPathComponent(name, isDirectory: true)
        try FileManager.default.createDirectory(at: library, withIntermediateDirectories: true)
        let index = try LibraryIndex.inMemory()
        chunkIndex = index.chunkIndex
        scanCache = index.scanCache
        let trust = TrustPolicy(trusting.map {
            TrustPolicy.Entry(deviceID: $0.deviceID, acceptsConnections: true, acceptsOffers: autoAcceptOffers, mayPull: allowPulls)
        })
        sync = LocalSync(
            identity: identity, store: store,
            configuration: .init(deviceName: name, library: library, libraryChunkIndex: chunkIndex, libraryScanCache: scanCache,
                                 trust: trust, decisionTimeout: decisionTimeout, offerReplyTimeout: offerReplyTimeout, clock: clock),
            transport: transport)
    }

    func start(host: String) async throws {
        address = try await sync.start(listeningOn: PeerAddress(host: host, port: host == "127.0.0.1" ? 0 : 7000), advertise: false)
    }

    /// Scans this device's library the way `lfsync push` does, with the chunk index kept up to date.
    func scan() async throws -> [Asset] {
        try await LibraryScanner(root: library, chunkIndex: chunkIndex).scan().assets
    }

    func state(of asset: Asset, for other: TestDevice) throws -> SyncState? {
        try store.state(of: asset.contentID, for: PeerKey(rawValue: other.identity.deviceID.description))
    }
}

enum EngineHarness {
    /// Chunk bytes of `assets` (each file content once) that `library` lacks, measured
    /// without the receiver's code:
    /// a file at its path whose content hashes to its file hash holds all its chunks; a
    /// `<file hash>.partial` in staging holds each chunk whose bytes hash to the chunk's
    /// hash. Resume tests bound what a second push may send by what this leaves missing.
    static func missingChunkBytes(of assets: [Asset], in library: URL) throws -> UInt64 {
        var missing: UInt64 = 0
        var counted = Set<Hash256>()
        for file in assets.flatMap(\.files) where counted.insert(file.manifest.fileHash).inserted {
            let manifest = file.manifest
            missing += manifest.size
            if let data = FileManager.default.contents(atPath: library.appendingPathComponent(manifest.path.string).path),
               SpecHashes.file(Array(data)) == manifest.fileHash {
                missing -= manifest.size
                continue
            }
            let partial = library.appendingPathComponent(".lfsync/staging/\(manifest.fileHash.hex).partial")
            guard let data = FileManager.default.contents(atPath: partial.path) else { continue }
            let bytes = Array(data)
            var offset = 0
            for chunk in manifest.chunks {
                let end = offset + Int(chunk.length)
                if end <= bytes.count, SpecHashes.chunk(bytes[offset..<end]) == chunk.hash { missing -= UInt64(chunk.length) }
                offset = end
            }
        }
        return missing
    }

    /// Every regular file under `root` (relative path → bytes), without lfsync's own folder.
    static func tree(_ root: URL) throws -> [String: Data] {
        var out: [String: Data] = [:]
        let base = root.standardizedFileURL.path
        guard let walker = FileManager.default.enumerator(atPath: base) else { return out }
        for case let relative as String in walker where !relative.hasPrefix(".lfsync") {
            let path = base + "/" + relative
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue,
                  (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) == nil else { continue }
            out[relative] = try Data(contentsOf: URL(fileURLWithPath: path))
        }
        return out
    }

    /// A sample library without the symlink (it is skipped by scans, so it would never arrive).
    static func writeSample(at url: URL, padding: Int = 200_000, seed: UInt64 = 2026) throws {
        try SampleLibrary.write(at: url, options: .init(photoPadding: padding, seed: seed))
        try FileManager.default.removeItem(at: url.appendingPathComponent("Documents/outside-link"))
    }
}

extension EngineHarness {
    /// A raw client that did the handshake, Hello and connection decision
    /// itself with `device`, so a test can send (or withhold) anything.
    /// - Returns: the channel and the decision `device` sent.
    static func rawSetUp(
        with device: TestDevice, network: InMemoryNetwork, as identity: DeviceIdentity, host: String = "mallory",
        configuration: InMemoryTransport.Configuration = .init()
    ) async throws -> (channel: SecureChannel, decision: WireMessage.ConnectionDecision) {
        let connection = try await network.transport(host: host, configuration: configuration).connect(to: device.address, timeout: .seconds(5))
        let channel = try await SecureChannel.initiate(over: connection, identity: identity, expectedPeer: device.identity.deviceID)
        try await channel.send(.hello(.init(protocolVersion: WireProtocol.version, deviceName: host, softwareVersion: "0", capabilities: [])))
        guard case .hello? = try await channel.receive(), case let .connectionDecision(decision)? = try await channel.receive() else {
            throw SyncError.protocolViolation("no Hello and ConnectionDecision from \(device.name)")
        }
        return (channel, decision)
    }

    /// The reply of a raw receiver that takes every chunk of every asset offered.
    static func acceptingEverything(_ offer: WireMessage.Offer) -> WireMessage {
        let needed = offer.assets.map { asset in
            WireMessage.NeededChunks(contentID: asset.contentID, files: asset.files.enumerated().map { index, file in
                .init(fileIndex: UInt16(index), chunks: .all(count: UInt32(file.manifest.chunks.count)))
            })
        }
        return .offerReply(.init(offerID: offer.offerID, decision: .accepted, needed: needed))
    }

    /// The serving side of a raw peer: accepts one connection, answers its Hello with
    /// `hello` and accepts it. Nil when the other side sent no Hello.
    static func rawAccept(on listener: any Listener, identity: DeviceIdentity, hello: WireMessage.Hello) async throws -> SecureChannel? {
        let channel = try await SecureChannel.accept(over: try await listener.accept(), identity: identity)
        guard case .hello? = try await channel.receive() else { return nil }
        try await channel.send(.hello(hello))
        try await channel.send(.connectionDecision(.init(accepted: true, reason: nil)))
        return channel
    }
}
