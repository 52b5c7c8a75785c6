import LocalFirstSync
import LFSyncSystem
import LFSyncCrypto
import LFSyncContent
import LFSyncStore
import LFSyncTransport
import LFSyncTCP
import LFSyncDiscovery
import LFSyncWire

/// The attacks of ARCHITECTURE.md, "Receiver safety" and issue 6, each sent over a fresh, fully
/// handshaken connection by a peer the receiver trusts (a compromised device),
/// except `untrustedKey`, which comes from a key the receiver never saw.
enum HostileScenario: String, CaseIterable {
    case dotDot = "dotdot"
    case nestedDotDot = "dotdot-nested"
    case absolutePath = "absolute-path"
    case nulInName = "nul-in-name"
    case controlCharacters = "control-chars"
    case stateDirectory = "state-dir"
    case plantedSymlink = "planted-symlink"
    case offerOverFreeSpace = "over-free-space"
    case chunkBeforeAcceptance = "chunk-before-accept"
    case chunkNotMatchingHash = "bad-chunk-hash"
    case zstdBomb = "zstd-bomb"
    case oversizedFrame = "oversized-frame"
    case millionAssets = "million-assets"
    case millionChunkManifest = "million-chunks"
    case largestManifest = "largest-manifest"
    case untrustedKey = "untrusted-key"

    /// What the scenario needs to know about the machine under test.
    struct Setting {
        /// An absolute directory outside the library that must stay empty.
        var outside: String
        /// A folder name inside the library that the lab made a symlink to `outside`.
        var symlinkName: String
    }

    /// A file name the receiver must refuse (or, for the symlink, must not follow).
    func hostilePath(_ setting: Setting) -> String? {
        switch self {
        case .dotDot: "../escaped-dotdot.txt"
        case .nestedDotDot: "photos/../../escaped-nested.txt"
        case .absolutePath: setting.outside + "/absolute.txt"
        case .nulInName: "nul\u{0}name.txt"
        case .controlCharacters: "ok/\u{1b}[31mred\u{7}.txt"
        case .stateDirectory: ".lfsync/staging/planted.txt"
        case .plantedSymlink: setting.symlinkName + "/through-symlink.txt"
        default: nil
        }
    }

    func run(_ setting: Setting, connect: (DeviceIdentity?) async throws -> HostileConnection.Opening) async throws -> HostileConnection.Answer {
        if self == .untrustedKey {
            switch try await connect(DeviceIdentity.generate()) {
            case let .refused(refusal): return refusal
            case let .opened(connection):
                await connection.close()
                return .accepted
            }
        }
        let connection: HostileConnection
        switch try await connect(nil) {
        case let .refused(refusal): throw HostilePeerError.notAccepted(refusal.summary)
        case let .opened(opened): connection = opened
        }
        defer { Task { await connection.close() } }
        let channel = connection.channel
        let timeout = Duration.seconds(30)
        let offerID: UInt64 = 1

        if let path = hostilePath(setting) {
            let bytes = HostilePayload.randomBytes(4096)
            let asset = HostilePayload.asset(path: path, bytes: bytes)
            try await channel.send(frames: [HostilePayload.offerFrame(offerID: offerID, assets: [asset])])
            let reply = await connection.answer(to: offerID, timeout: timeout)
            guard case .accepted = reply else { return reply }
            // Accepted: send the bytes, so the receipt shows whether anything was written.
            try await channel.send(.chunk(.init(offerID: offerID, contentID: asset.contentID, fileIndex: 0, chunkIndex: 0,
                                                payload: .raw(bytes))))
            return await connection.answer(to: offerID, timeout: timeout)
        }

        switch self {
        case .offerOverFreeSpace:
            // A valid manifest of a 1 TiB file in 16 MiB chunks: the receiver must decline before writing.
            let asset = HostilePayload.hugeAsset(path: "huge.bin", chunkCount: 1 << 16, chunkLength: 16 << 20)
            try await channel.send(frames: [HostilePayload.offerFrame(offerID: offerID, assets: [asset])])
            return await connection.answer(to: offerID, timeout: timeout)

        case .largestManifest:
            // As many 1 MiB chunks as one frame can carry (~460k): decoded within bounds, then declined.
            let chunkCount = (WireProtocol.maxPayloadLength - 1024) / 36
            let asset = HostilePayload.hugeAsset(path: "largest.bin", chunkCount: chunkCount, chunkLength: 1 << 20)
            try await channel.send(frames: [HostilePayload.offerFrame(offerID: offerID, assets: [asset])])
            return await connection.answer(to: offerID, timeout: timeout)

        case .chunkBeforeAcceptance:
            let bytes = HostilePayload.randomBytes(4096)
            let asset = HostilePayload.asset(path: "sneaky.txt", bytes: bytes)
            try await channel.send(.chunk(.init(offerID: 77, contentID: asset.contentID, fileIndex: 0, chunkIndex: 0,
                                                payload: .raw(bytes))))
            return await connection.answer(to: 77, timeout: timeout)

        case .chunkNotMatchingHash, .zstdBomb:
            let bytes = HostilePayload.randomBytes(64 << 10)
            let asset = HostilePayload.asset(path: "\(rawValue).bin", bytes: bytes)
            try await channel.send(frames: [HostilePayload.offerFrame(offerID: offerID, assets: [asset])])
            let reply = await connection.answer(to: offerID, timeout: timeout)
            guard case .accepted = reply else { throw HostilePeerError.setup("a valid offer was not accepted: \(reply.summary)") }
            let payload: ChunkPayload = self == .zstdBomb
                ? .zstd(compressed: HostilePayload.zstdBomb(), decodedLength: bytes.count)
                : .raw(HostilePayload.randomBytes(bytes.count))
            // The encoder checks lengths only, so it carries a lying payload as it is.
            try await channel.send(.chunk(.init(offerID: offerID, contentID: asset.contentID, fileIndex: 0, chunkIndex: 0, payload: payload)))
            return await connection.answer(to: offerID, timeout: timeout)

        case .oversizedFrame:
            let frame = Frame(type: WireMessageType.chunk.rawValue, payload: [UInt8](repeating: 0, count: WireProtocol.maxPayloadLength + 1))
            try await channel.send(frames: [frame])
            return await connection.answer(to: 0, timeout: timeout)

        case .millionAssets:
            try await channel.send(frames: [HostilePayload.lyingAssetCountFrame(offerID: offerID, count: 1_000_000)])
            return await connection.answer(to: offerID, timeout: timeout)

        case .millionChunkManifest:
            try await channel.send(frames: [HostilePayload.lyingChunkCountFrame(offerID: offerID, count: 1_000_000)])
            return await connection.answer(to: offerID, timeout: timeout)

        default:
            throw HostilePeerError.setup("scenario \(rawValue) has no implementation")
        }
    }
}

enum HostilePeerError: Error, CustomStringConvertible {
    case notAccepted(String)
    case setup(String)

    var description: String {
        switch self {
        case let .notAccepted(detail): "the peer under test did not accept the hostile peer's connection (trust it with --auto-accept): \(detail)"
        case let .setup(detail): detail
        }
    }
}
