import Foundation
import LocalFirstSync
import LFSyncSystem
import LFSyncCrypto
import LFSyncContent
import LFSyncStore
import LFSyncTransport
import LFSyncTCP
import LFSyncDiscovery

/// `lfsync scan DIR [--json]`: what would be synced, and how lfsync groups it.
struct ScanCommand {
    let arguments: ParsedArguments
    let console: Console

    func run() async throws -> ExitCode {
        let path = arguments.positionals[0]
        let library = try DirectoryArgument.existing(path)
        var scanner = LibraryScanner(root: library, exclusions: try ExcludeOptions.exclusions(from: arguments))
        if !arguments[Self.noCache] {
            let home = StateHome()
            try home.createIfNeeded()
            let index = try LibraryIndex.open(at: home.libraryIndex(for: library))
            scanner.cache = index.scanCache
            scanner.chunkIndex = index.chunkIndex
        }
        let scan = try await scanner.scan()
        if arguments[LFSyncCommands.json] {
            console.result(try ScanReport(library: library.standardizedFileURL.path, scan: scan).json())
        } else {
            printText(scan)
        }
        return .success
    }

    private func printText(_ scan: LibraryScan) {
        for asset in scan.assets {
            console.result("\(asset.contentID.hash.shortHex)  \(asset.kind.rawValue.padding(toLength: 11, withPad: " ", startingAt: 0)) \(asset.files.count) file\(asset.files.count == 1 ? " " : "s")  \(ByteCountText.format(asset.totalSize))")
            for file in asset.files {
                let role = file.role.description.padding(toLength: 15, withPad: " ", startingAt: 0)
                console.result("    \(role) \(file.manifest.path.printable)  (\(ByteCountText.format(file.manifest.size)))")
            }
        }
        let stats = scan.statistics
        console.note(String(format: "%d assets, %d files, %@ — %d hashed, %d from cache, in %.2f s",
                            scan.assets.count, stats.files, ByteCountText.format(stats.bytes),
                            stats.filesHashed, stats.filesFromCache, stats.seconds))
        for skipped in scan.skipped {
            console.note("skipped \(skipped.path.printable): \(skipped.reason)")
        }
        if !scan.excluded.isEmpty {
            console.note("\(scan.excluded.count) excluded by the ignore rules\(console.verbosity == .verbose ? ":" : " (-v lists them)")")
            for path in scan.excluded { console.detail("excluded \(path.printable)") }
        }
    }
}

/// The stable JSON shape of `lfsync scan --json` (documented in README).
struct ScanReport: Encodable {
    struct AssetReport: Encodable {
        var contentID: String
        var kind: String
        var size: UInt64
        var files: [FileReport]
    }

    struct FileReport: Encodable {
        var path: String
        var role: String
        var size: UInt64
        var fileHash: String
        var chunks: Int
    }

    var library: String
    var assets: [AssetReport]
    var skipped: [SkippedEntry]
    /// Left out by the ignore rules (a directory as `dir/`), apart from what could not be read.
    var excluded: [String]
    var statistics: LibraryScan.Statistics

    init(library: String, scan: LibraryScan) {
        self.library = library
        assets = scan.assets.map { asset in
            AssetReport(
                contentID: asset.contentID.hex, kind: asset.kind.rawValue, size: asset.totalSize,
                files: asset.files.map {
                    FileReport(path: $0.manifest.path.string, role: $0.role.description, size: $0.manifest.size,
                               fileHash: $0.manifest.fileHash.hex, chunks: $0.manifest.chunks.count)
                })
        }
        skipped = scan.skipped
        excluded = scan.excluded.map(\.string)
        statistics = scan.statistics
    }

    func json() throws -> String {
        try JSONOutput.render(self)
    }
}

extension ScanCommand: LFSyncCommand {
    static let noCache = Flag("no-cache", help: "Hash every file; neither read nor update the scan cache.")

    static let spec = CommandSpec(
        name: "scan",
        abstract: "List the assets lfsync sees in a folder (what would be synced)",
        discussion: "Walks DIR without following symbolic links, groups Live Photo pairs (by their Apple content identifier first, same name second), RAW+JPEG pairs and sidecars into assets, and prints each asset's kind, files, roles, sizes and content ID. Unchanged files are taken from the scan cache in the state directory, so a rescan reads no file content. What the ignore rules leave out (see IGNORE RULES) is listed apart from what could not be read: as \"excluded\" in the JSON, and with -v.",
        options: [LFSyncCommands.json.spec, noCache.spec] + ExcludeOptions.specs,
        arguments: [ArgumentSpec(name: "DIR", help: "The library folder to scan.", completion: .directory)],
        examples: ["lfsync scan ~/Pictures", "lfsync scan --json ~/Pictures | jq '.assets | length'"]
    )
}
