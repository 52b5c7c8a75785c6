import Foundation
import LocalFirstSync
import LFSyncSystem
import LFSyncCrypto
import LFSyncContent
import LFSyncStore
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
    }

    func run() async throws -> ExitCode {
        let library = try DirectoryArgument.existing(try arguments.value(Self.library) ?? FileManager.default.currentDirectoryPath)
        let index = try home.index(for: library)
        // An index an earlier lfsync wrote holds only the old hashes: the upgrade compares
        // the files with those, and what it finds changed is what this verify reports.
        let upgrade = try await HashUpgradeNotice.upgrade(index, of: library, ledger: try home.ledger(), exclusions: ScanExclusions(), console: console)
        let recorded = upgrade == nil ? try index.scanCache.loadAll() : [:]
        // A fresh scan without the cache re-hashes everything.
        let scan = try await LibraryScanner(root: library).scan()
        var report = Report(library: library.path, filesChecked: 0, corrupt: upgrade?.damaged ?? [], modified: [], unreadable: [])
        for asset in scan.assets {
            for file in asset.files {
                report.filesChecked += 1
                guard let old = recorded[file.manifest.path] else { continue }
                if old.manifest.fileHash == file.manifest.fileHash { continue }
                if old.manifest.size == file.manifest.size && old.manifest.modificationTimeNs == file.manifest.modificationTimeNs {
                    report.corrupt.append(file.manifest.path)
                } else {
                    report.modified.append(file.manifest.path)
                }
            }
        }
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
            console.note("\(report.filesChecked) files checked, \(report.corrupt.count) corrupt, \(report.modified.count) modified since the last scan")
        }
        return report.corrupt.isEmpty && report.unreadable.isEmpty ? .success : .partial
    }
}

extension VerifyCommand: LFSyncCommand {
    static let library = Option<String>("library", valueName: "DIR", help: "The folder to verify (default: the current directory).", completion: .directory)

    static let spec = CommandSpec(
        name: "verify",
        abstract: "Re-hash a library and report corrupted files",
        discussion: "Reads every file again and compares it with the hashes recorded when it was last scanned. A file whose content changed while its size and modification time did not is reported as corrupt (exit 1).",
        options: [library.spec, LFSyncCommands.json.spec],
        examples: ["lfsync verify --library ~/Pictures"]
    )
}
