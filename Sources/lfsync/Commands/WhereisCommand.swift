import Foundation
import LocalFirstSync
import LFSyncCrypto
import LFSyncContent
import LFSyncStore

/// `lfsync whereis [PATH...] [--missing-on PEER] [--json]`: per asset of each library
/// PATH, every trusted device and what the ledger knows of it there — and what this device
/// offloaded. From the ledger and the scan cache alone: no device is asked, no unchanged
/// file is read.
struct WhereisCommand {
    let arguments: ParsedArguments
    let console: Console
    let home = StateHome()

    struct DeviceState: Encodable {
        var peer: String
        var deviceID: String
        /// synced, pending (never offered included), in-flight, interrupted or failed.
        var state: String
        /// When the row last changed: for `synced`, when the device's Receipt confirmed it.
        var at: Date?
    }

    struct AssetPlace: Encodable {
        var path: RelativePath
        var files: [RelativePath]
        var contentID: String
        var bytes: UInt64
        /// Here, offloaded from here (then `holders` proved they held it when it went), or
        /// deleted by a sync (then only the versions area holds it, `lfsync restore` brings it back).
        var here: String
        var holders: [String]?
        var devices: [DeviceState]
        /// Earlier versions of its files a sync kept in the library's `.lfsync/versions`.
        var keptVersions: Int = 0
    }

    func run() async throws -> ExitCode {
        let identity = try home.identity()
        let config = try DeviceConfig.load(from: home.configURL, ownID: identity.deviceID)
        let ledger = try home.ledger()
        let paths = arguments.positionals.isEmpty ? [FileManager.default.currentDirectoryPath] : arguments.positionals
        let targets = try paths.map { try LibraryLocation.required($0, home: home) }
        var peers = config.ledgerKeys
        if let only = try arguments.value(Self.missingOn) {
            let target = try PeerResolver(config: config, localDeviceID: identity.deviceID).resolve(only)
            guard let id = target.deviceID else { throw UsageError(message: "--missing-on needs a name or Device ID", hint: nil) }
            peers = [(target.label, PeerKey(rawValue: id.description), id.description)]
        }
        var places: [AssetPlace] = []
        for target in targets {
            let library = target.library
            let index = try await HashUpgradeNotice.upgradedIndex(for: library, home: home, ledger: ledger, exclusions: ScanExclusions(), console: console)
            let inside = target.contains
            let assets = try await LibraryScanner(root: library, cache: index.scanCache, chunkIndex: index.chunkIndex).scan().assets
                .filter { $0.files.contains { inside($0.manifest.path) } }
            let root = OffloadedFile.libraryKey(library)
            let offloaded = try await ledger.read { store throws(SQLiteError) in try store.offloaded(inLibrary: root) }
                .filter { inside($0.path) }
            let kept = try await ledger.read { store throws(SQLiteError) in try store.keptVersions(library: root) }
                .filter { inside($0.path) }
            let keptByPath = Dictionary(grouping: kept, by: \.path)
            var contents = assets.map(\.contentID)
            contents += offloaded.map(\.content)
            var rows: [PeerKey: [ContentID: SyncStateStore.Entry]] = [:]
            for peer in peers {
                let key = peer.key, wanted = contents
                rows[key] = try await ledger.read { store throws(SQLiteError) in try store.entries(of: wanted, for: key) }
            }
            func devices(_ content: ContentID) -> [DeviceState] {
                peers.map { peer in
                    let entry = rows[peer.key]?[content]
                    return DeviceState(peer: peer.name, deviceID: peer.deviceID, state: (entry?.state ?? .pending).rawValue, at: entry?.updatedAt)
                }
            }
            for asset in assets {
                places.append(AssetPlace(
                    path: asset.primaryPath, files: asset.files.map(\.manifest.path), contentID: asset.contentID.hex,
                    bytes: asset.totalSize, here: "here", holders: nil, devices: devices(asset.contentID),
                    keptVersions: asset.files.reduce(0) { $0 + (keptByPath[$1.manifest.path]?.count ?? 0) }))
            }
            // Offloaded files, one entry per content (its files together), unless a file is back.
            let present = Set(assets.flatMap { $0.files.map(\.manifest.path) })
            var byContent: [ContentID: [OffloadedFile]] = [:]
            for file in offloaded where !present.contains(file.path) { byContent[file.content, default: []].append(file) }
            for (content, files) in byContent.sorted(by: { $0.value[0].path < $1.value[0].path }) {
                let holders = files[0].holders.map(config.displayName(ofDeviceID:))
                places.append(AssetPlace(
                    path: files[0].path, files: files.map(\.path), contentID: content.hex,
                    bytes: files.reduce(0) { $0 + $1.size }, here: "offloaded", holders: holders, devices: devices(content),
                    keptVersions: files.reduce(0) { $0 + (keptByPath[$1.path]?.count ?? 0) }))
            }
            // Paths a sync deleted here, whose last version only the versions area holds.
            let offloadedPaths = Set(offloaded.map(\.path))
            for (path, versions) in keptByPath.sorted(by: { $0.key < $1.key })
            where !present.contains(path) && !offloadedPaths.contains(path) && versions.contains(where: { $0.reason == .deleted }) {
                guard let last = versions.max(by: { $0.keptAt < $1.keptAt }) else { continue }
                let content = ContentID(files: [(role: .primary, fileHash: last.fileHash)])  // as a file on its own
                places.append(AssetPlace(
                    path: path, files: [path], contentID: content.hex, bytes: last.size, here: "deleted",
                    holders: nil, devices: [], keptVersions: versions.count))
            }
        }
        places.sort { $0.path < $1.path }
        if try arguments.value(Self.missingOn) != nil {
            places = places.filter { $0.devices.first?.state != SyncState.synced.rawValue }
        }
        if arguments[LFSyncCommands.json] {
            console.result(try JSONOutput.render(places))
            return .success
        }
        if peers.isEmpty { console.note("no trusted devices yet: 'lfsync trust DEVICE-ID' adds one") }
        let formatter = ISO8601DateFormatter()
        for place in places {
            var here: String = switch place.here {
            case "here": ""
            case "deleted": " [deleted by a sync; 'lfsync restore' brings it back]"
            default: " [offloaded; held by \(place.holders?.joined(separator: ", ") ?? "?")]"
            }
            if place.keptVersions > 0 { here += " [\(place.keptVersions) earlier version\(place.keptVersions == 1 ? "" : "s") kept; 'lfsync versions']" }
            let others = place.devices.map { device in
                "\(device.peer): \(device.state)\(device.state == SyncState.synced.rawValue ? device.at.map { " " + formatter.string(from: $0) } ?? "" : "")"
            }
            console.result("\(PrintablePath.escape(place.path.string))\(here)  \(others.joined(separator: "  "))")
        }
        console.note("\(places.count) asset\(places.count == 1 ? "" : "s")")
        return .success
    }
}

extension WhereisCommand: LFSyncCommand {
    static let missingOn = Option<String>("missing-on", valueName: "PEER", help: "Only the assets PEER does not hold verified (not synced there).", completion: .peer)

    static let spec = CommandSpec(
        name: "whereis",
        abstract: "Show which devices hold each asset",
        discussion: "For every asset of each PATH (default: the current directory) — a library, or a folder or file in a library lfsync has indexed, answered from that library (a path in no library lfsync knows is an error, never indexed) — every trusted device and what the ledger knows of it there: synced (its Receipt confirmed it verified and stored, with when), pending (never offered counts as pending), in-flight, interrupted or failed. Assets offloaded from this device are listed with the devices that proved they held them when they went. Earlier versions a sync kept in .lfsync/versions are counted per asset, and a file a sync deleted here is listed as deleted while its last version is kept ('lfsync versions', 'lfsync restore'). Reads only the ledger and the scan cache: no device is asked and unchanged files are not read. --missing-on PEER lists what PEER lacks.",
        options: [missingOn.spec, LFSyncCommands.json.spec],
        arguments: [ArgumentSpec(name: "PATH", help: "A library, a folder in one or a file (repeatable; default: the current directory).", isOptional: true, isRepeating: true, completion: .file)],
        examples: ["lfsync whereis ~/Pictures", "lfsync whereis ~/Pictures/DCIM/IMG_0001.HEIC", "lfsync whereis ~/Pictures --missing-on nas", "lfsync whereis ~/Pictures --json"]
    )
}
