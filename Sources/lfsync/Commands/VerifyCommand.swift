import Foundation
import LocalFirstSync
import LFSyncSystem
import LFSyncCrypto
import LFSyncContent
import LFSyncStore
import LFSyncLanding
import LFSyncTransport
import LFSyncTCP
import LFSyncDiscovery

/// `lfsync verify [--library DIR]`: re-read every file and compare it with
/// the hashes recorded by the last scan. Content that changed while size and
/// mtime did not is corruption (bit rot, a bad disk, a tampering tool).
struct VerifyCommand {
    let arguments: ParsedArguments
    let console: Console
    let home = StateHome()

    struct Report: Encodable {
        var library: String
        var filesChecked: Int
        var corrupt: [RelativePath]
        var modified: [RelativePath]
        /// A list, not an object keyed by path: two paths may differ only in normalisation.
        var unreadable: [SkippedEntry]
        /// With --repair: the corrupt files healed from another device, and those that were not.
        var repaired: [BitRotRepair.Repaired]?
        var unrepaired: [BitRotRepair.Unrepaired]?
        /// Damaged copies kept in `.lfsync/damaged` by earlier repairs, until --clear-damaged.
        var damagedCopies: [String]
    }

    func run() async throws -> ExitCode {
        let library = try DirectoryArgument.existing(try arguments.value(Self.library) ?? FileManager.default.currentDirectoryPath)
        if arguments[Self.clearDamaged] { return try clearDamaged(in: library) }
        if try arguments.value(Self.from) != nil, !arguments[Self.repair] {
            throw UsageError(message: "--from needs --repair", hint: "Run 'lfsync verify --help' for usage.")
        }
        let index = try home.index(for: library)
        // An index an earlier lfsync wrote holds only the old hashes: the upgrade compares
        // the files with those, and what it finds changed is what this verify reports.
        let upgrade = try await HashUpgradeNotice.upgrade(index, of: library, ledger: try home.ledger(), exclusions: ScanExclusions(), console: console)
        let recorded = upgrade == nil ? try index.scanCache.loadAll() : [:]
        // A fresh scan without the cache re-hashes everything.
        let scan = try await LibraryScanner(root: library).scan()
        var report = Report(library: library.path, filesChecked: 0, corrupt: upgrade?.damaged ?? [], modified: [], unreadable: [], damagedCopies: [])
        var damage: [BitRotRepair.Damage] = []
        for asset in scan.assets {
            var damagedHere: [(path: RelativePath, recorded: FileManifest)] = []
            for file in asset.files {
                report.filesChecked += 1
                guard let old = recorded[file.manifest.path] else { continue }
                if old.manifest.fileHash == file.manifest.fileHash { continue }
                if old.manifest.size == file.manifest.size && old.manifest.modificationTimeNs == file.manifest.modificationTimeNs {
                    report.corrupt.append(file.manifest.path)
                    var before = old.manifest
                    before.permissions = file.manifest.permissions
                    damagedHere.append((file.manifest.path, before))
                } else {
                    report.modified.append(file.manifest.path)
                }
            }
            // The asset as it was before the damage: what other devices hold, and are asked about.
            if !damagedHere.isEmpty {
                let before = Asset(files: asset.files.map { file in
                    damagedHere.first { $0.path == file.manifest.path }.map { Asset.File(role: file.role, manifest: $0.recorded) } ?? file
                })
                damage += damagedHere.map { BitRotRepair.Damage(path: $0.path, recorded: $0.recorded, asset: before) }
            }
        }
        if arguments[Self.repair] {
            let outcome = try await repair(damage, in: library)
            (report.repaired, report.unrepaired) = (outcome.repaired, outcome.unrepaired)
            for path in upgrade?.damaged ?? [] {
                report.unrepaired?.append(.init(path: path, reason: "found by the hash upgrade: no chunk hashes recorded to repair it against"))
            }
        }
        report.damagedCopies = BitRotRepair.keptCopies(in: library)
        for skipped in scan.skipped where !skipped.reason.contains("symbolic link") {
            report.unreadable.append(skipped)
        }
        if recorded.isEmpty, upgrade == nil {
            // Nothing to compare against yet: record the hashes now for the next verify.
            _ = try await LibraryScanner(root: library, cache: index.scanCache, chunkIndex: index.chunkIndex).scan()
        }
        if arguments[LFSyncCommands.json] {
            console.result(try JSONOutput.render(report))
        } else {
            if recorded.isEmpty, upgrade == nil { console.note("no earlier scan of \(library.path): hashes recorded now; run verify again later to compare") }
            for path in report.corrupt { console.result("CORRUPT   \(path) (content changed, size and time did not)") }
            for path in report.modified { console.result("modified  \(path)") }
            for entry in report.unreadable { console.result("unreadable \(entry.path): \(entry.reason)") }
            for healed in report.repaired ?? [] {
                console.result("REPAIRED  \(PrintablePath.escape(healed.path.string)) (\(healed.chunks) chunk\(healed.chunks == 1 ? "" : "s"), \(ByteCountText.format(healed.bytes)) from \(healed.from); damaged copy kept at \(healed.damagedCopy))")
            }
            for failure in report.unrepaired ?? [] { console.result("NOT REPAIRED \(PrintablePath.escape(failure.path.string)): \(failure.reason)") }
            console.note("\(report.filesChecked) files checked, \(report.corrupt.count) corrupt\(report.repaired.map { ", \($0.count) repaired" } ?? ""), \(report.modified.count) modified since the last scan")
            if !report.damagedCopies.isEmpty {
                console.note("\(report.damagedCopies.count) damaged cop\(report.damagedCopies.count == 1 ? "y" : "ies") kept in \(library.path)/.lfsync/damaged ('lfsync verify --clear-damaged' removes them)")
            }
        }
        let healed = Set((report.repaired ?? []).map(\.path))
        return report.corrupt.allSatisfy(healed.contains) && report.unreadable.isEmpty ? .success : .partial
    }

    /// Connects to the device named with --from, or every trusted one, and heals `damage`.
    private func repair(_ damage: [BitRotRepair.Damage], in library: URL) async throws -> (repaired: [BitRotRepair.Repaired], unrepaired: [BitRotRepair.Unrepaired]) {
        guard !damage.isEmpty else { return ([], []) }
        let identity = try home.identity()
        let config = try DeviceConfig.load(from: home.configURL)
        let resolver = PeerResolver(config: config, localDeviceID: identity.deviceID)
        let targets: [PeerResolver.Target]
        if let from = try arguments.value(Self.from) {
            let target = try resolver.resolve(from)
            guard target.trusted != nil else { throw UsageError(message: "--from needs a trusted device ('\(from)' is not one)", hint: "'lfsync trust DEVICE-ID' first.") }
            targets = [target]
        } else {
            targets = try config.peers.map { try resolver.resolve($0.name) }
        }
        // Nothing may be received into the library while its files are replaced.
        let lock = try LibraryLock.forReceiving(into: library)
        defer { withExtendedLifetime(lock) {} }
        let sync = LocalSync(identity: identity, store: try home.ledger(), configuration: .init(deviceName: config.name, trust: config.trustPolicy), transport: TCPTransport())
        let peers = await PeerConnector.connectAll(targets, sync: sync, config: config, console: console)
        let outcome = await BitRotRepair(library: library, sync: sync, peers: peers) { config.trusted($0.deviceID)?.name ?? $0.name }.repair(damage)
        await sync.stop()
        return outcome
    }

    /// `--clear-damaged`: the damaged copies earlier repairs kept, removed at the user's word.
    private func clearDamaged(in library: URL) throws -> ExitCode {
        let kept = BitRotRepair.keptCopies(in: library)
        let folder = BitRotRepair.damagedFolder(in: library)
        if FileManager.default.fileExists(atPath: folder.path) { try FileManager.default.removeItem(at: folder) }
        console.note("\(kept.count) damaged cop\(kept.count == 1 ? "y" : "ies") removed from \(library.path)/.lfsync/damaged")
        return .success
    }
}

extension VerifyCommand: LFSyncCommand {
    static let library = Option<String>("library", valueName: "DIR", help: "The folder to verify (default: the current directory).", completion: .directory)
    static let repair = Flag("repair", help: "Heal corrupt files: fetch only their bad chunks from a trusted device that holds them verified, check them, and replace each file atomically, keeping the damaged copy in .lfsync/damaged.")
    static let from = Option<String>("from", valueName: "PEER", help: "With --repair: fetch from this trusted device (default: the first that answers the holding check \"held and verified\").", completion: .peer)
    static let clearDamaged = Flag("clear-damaged", help: "Remove the damaged copies earlier repairs kept in .lfsync/damaged, and nothing else.")

    static let spec = CommandSpec(
        name: "verify",
        abstract: "Re-hash a library and report corrupted files",
        discussion: "Reads every file again and compares it with the hashes recorded when it was last scanned. A file whose content changed while its size and modification time did not is reported as corrupt (exit 1). With --repair, each corrupt file is healed from another device: only its chunks whose hashes no longer match are fetched, from a trusted device that answers the live holding check \"held and verified\" for its asset (or the one given with --from); each chunk is checked against its recorded hash, the repaired file again as a whole, and it replaces the damaged one in one rename; the damaged bytes are kept in DIR/.lfsync/damaged until --clear-damaged. A file whose size or time changed was edited, and is never repaired; exit 0 only when every corrupt file was repaired.",
        options: [library.spec, repair.spec, from.spec, clearDamaged.spec, LFSyncCommands.json.spec],
        examples: ["lfsync verify --library ~/Pictures", "lfsync verify --library ~/Pictures --repair", "lfsync verify --library ~/Pictures --repair --from nas"]
    )
}
