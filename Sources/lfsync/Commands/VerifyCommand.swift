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

/// `lfsync verify [PATH]`: re-read every file and compare it with the hashes recorded by
/// the last scan. Content that changed while nothing the file system records did — inode,
/// size, modification and change time — is corruption (bit rot, a bad disk); anything else
/// is an edit.
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
        /// Versions a sync kept in `.lfsync/versions`, each re-read against the hash recorded
        /// when it was kept: how many, and those that no longer match or are gone (by where
        /// they are kept).
        var versionsChecked = 0
        var damagedVersions: [String] = []
        var missingVersions: [String] = []
    }

    func run() async throws -> ExitCode {
        let library: URL
        if let path = try LibraryArgument.path(arguments, legacy: Self.library, console: console) {
            library = try DirectoryArgument.existing(path)
        } else {
            // No PATH: the library the current directory is in, said so — never a re-hash of
            // whatever folder the command happened to be run from.
            guard let here = try LibraryLocation.indexed(FileManager.default.currentDirectoryPath, home: home) else {
                throw UsageError(message: "verify needs a library: lfsync verify PATH", hint: "The current directory is in no library lfsync knows.")
            }
            library = here.library
            console.note("verifying \(library.path), the library the current directory is in")
        }
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
            var damagedHere: [(path: RelativePath, recorded: FileManifest, checked: CheckedFile)] = []
            for file in asset.files {
                report.filesChecked += 1
                let path = file.manifest.path
                guard let old = recorded[path] else { continue }
                if old.manifest.fileHash == file.manifest.fileHash { continue }
                switch Self.verdict(recorded: old, now: scan.settledStatus[path]) {
                case let .corrupt(checked):
                    report.corrupt.append(path)
                    var before = old.manifest
                    before.permissions = file.manifest.permissions
                    damagedHere.append((path, before, checked))
                case .modified:
                    report.modified.append(path)
                }
            }
            // The asset as it was before the damage: what other devices hold, and are asked about.
            if !damagedHere.isEmpty {
                let before = Asset(files: asset.files.map { file in
                    damagedHere.first { $0.path == file.manifest.path }.map { Asset.File(role: file.role, manifest: $0.recorded) } ?? file
                })
                damage += damagedHere.map { BitRotRepair.Damage(path: $0.path, recorded: $0.recorded, checked: $0.checked, asset: before) }
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
        try await checkVersions(of: library, into: &report)
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
            for path in report.corrupt { console.result("CORRUPT   \(path) (content changed; inode, size and times did not)") }
            for path in report.modified { console.result("modified  \(path)") }
            for entry in report.unreadable { console.result("unreadable \(entry.path): \(entry.reason)") }
            for healed in report.repaired ?? [] {
                console.result("REPAIRED  \(PrintablePath.escape(healed.path.string)) (\(healed.chunks) chunk\(healed.chunks == 1 ? "" : "s"), \(ByteCountText.format(healed.bytes)) from \(healed.from); damaged copy kept at \(healed.damagedCopy))")
            }
            for failure in report.unrepaired ?? [] { console.result("NOT REPAIRED \(PrintablePath.escape(failure.path.string)): \(failure.reason)") }
            console.note("\(report.filesChecked) files checked, \(report.corrupt.count) corrupt\(report.repaired.map { ", \($0.count) repaired" } ?? ""), \(report.modified.count) modified since the last scan")
            for stored in report.damagedVersions { console.result("DAMAGED VERSION .lfsync/versions/\(PrintablePath.escape(stored)) (its bytes no longer match those kept)") }
            for stored in report.missingVersions { console.result("MISSING VERSION .lfsync/versions/\(PrintablePath.escape(stored))") }
            if report.versionsChecked > 0 { console.note("\(report.versionsChecked) kept version\(report.versionsChecked == 1 ? "" : "s") checked in .lfsync/versions") }
            if !report.damagedCopies.isEmpty {
                console.note("\(report.damagedCopies.count) damaged cop\(report.damagedCopies.count == 1 ? "y" : "ies") kept in \(library.path)/.lfsync/damaged ('lfsync verify --clear-damaged' removes them)")
            }
        }
        let healed = Set((report.repaired ?? []).map(\.path))
        return report.corrupt.allSatisfy(healed.contains) && report.unreadable.isEmpty && report.damagedVersions.isEmpty ? .success : .partial
    }

    /// Re-reads every version kept in the library's versions area against its recorded hash.
    private func checkVersions(of library: URL, into report: inout Report) async throws {
        let key = OffloadedFile.libraryKey(library)
        let kept = try await home.ledger().read { store throws(SQLiteError) in try store.keptVersions(library: key) }
        let area = VersionsArea(library: library)
        for version in kept {
            report.versionsChecked += 1
            guard let url = area.url(ofStored: version.stored), FileManager.default.fileExists(atPath: url.path) else {
                report.missingVersions.append(version.stored)
                continue
            }
            let manifest = try? FileDigester().manifest(absolutePath: url.path, relativePath: version.path.string)
            if manifest?.fileHash != version.fileHash { report.damagedVersions.append(version.stored) }
        }
    }

    /// Connects to the device named with --from, or every trusted one, and heals `damage`.
    private func repair(_ damage: [BitRotRepair.Damage], in library: URL) async throws -> (repaired: [BitRotRepair.Repaired], unrepaired: [BitRotRepair.Unrepaired]) {
        guard !damage.isEmpty else { return ([], []) }
        let identity = try home.identity()
        let config = try DeviceConfig.load(from: home.configURL, ownID: identity.deviceID)
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

    /// A file whose bytes differ from the hashes recorded for it.
    enum Verdict: Equatable {
        /// Bit rot: the file system recorded no change — same inode, size, modification time
        /// and change time as when the hashes were recorded — yet the bytes differ.
        case corrupt(CheckedFile)
        /// Anything else: an edit (even one that put the modification time back moves the
        /// change time), a file replaced by another, or one whose change time was not
        /// recorded or that changed while it was read (never repaired: when in doubt, keep).
        case modified
    }

    /// What differing bytes mean for a file recorded as `recorded` and found with `now` (its
    /// status while it was hashed again; nil when it changed moments before or during that).
    static func verdict(recorded: IndexedFile, now: FileStatus?) -> Verdict {
        guard let now, let changeTimeNs = recorded.changeTimeNs, recorded.isUnchanged(now),
              let path = try? LibraryPath.validate(recorded.path) else { return .modified }
        return .corrupt(CheckedFile(path: path, inode: recorded.inode, size: recorded.manifest.size,
                                    modificationTimeNs: recorded.manifest.modificationTimeNs, changeTimeNs: changeTimeNs))
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
    static let library = Option<String>("library", valueName: "DIR", help: "Deprecated spelling of PATH.", completion: .directory)
    static let repair = Flag("repair", help: "Heal corrupt files: fetch only their bad chunks from a trusted device that holds them verified, check them, and replace each file atomically, keeping the damaged copy in .lfsync/damaged.")
    static let from = Option<String>("from", valueName: "PEER", help: "With --repair: fetch from this trusted device (default: the first that answers the holding check \"held and verified\").", completion: .peer)
    static let clearDamaged = Flag("clear-damaged", help: "Remove the damaged copies earlier repairs kept in .lfsync/damaged, and nothing else.")

    static let spec = CommandSpec(
        name: "verify",
        abstract: "Re-hash a library and report corrupted files",
        discussion: "Reads every file again and compares it with the hashes recorded when it was last scanned. A file whose content changed while nothing the file system records did (same inode, size, modification time and change time) is reported as corrupt: bit rot, which the file system was never told of (exit 1). Any other difference is an edit, reported as modified: an edit moves the change time even when a tool puts the modification time back. With --repair, each corrupt file is healed from another device: only its chunks whose hashes no longer match are fetched, from a trusted device that allows this device to pull and answers the live holding check \"held and verified\" for its asset (or the one given with --from); each chunk is checked against its recorded hash, and the repaired file takes the damaged one's place in one exchange, only if the file is still the one checked; the damaged bytes are kept in PATH/.lfsync/damaged until --clear-damaged. A modified file is never repaired. The versions a sync kept in PATH/.lfsync/versions are re-read too, each against the hash it was kept with: one that no longer matches is reported as a DAMAGED VERSION, one gone as a MISSING VERSION. Exit 0 only when every corrupt file was repaired and no kept version is damaged.",
        options: [repair.spec, from.spec, clearDamaged.spec, LFSyncCommands.json.spec, library.spec],
        arguments: [LibraryArgument.argument("The library to verify (default: the library the current directory is in).")],
        examples: ["lfsync verify ~/Pictures", "lfsync verify ~/Pictures --repair", "lfsync verify ~/Pictures --repair --from nas"]
    )
}
