#if canImport(Glibc)
import Glibc
#endif
import Foundation
import LocalFirstSync
import LFSyncContent
import LFSyncCrypto
import LFSyncLanding
import LFSyncStore
import LFSyncSystem

/// `lfsync versions PATH [--json]`: the files a sync moved out of PATH (or out of paths
/// below it) into the library's versions area — replaced by a newer version, or deleted by
/// another device's change — newest first, with when, why and by which device.
struct VersionsCommand {
    let arguments: ParsedArguments
    let console: Console
    let home = StateHome()

    struct Listed: Encodable {
        var path: RelativePath
        var keptAt: Date
        var reason: String
        var by: String
        var bytes: UInt64
        /// Library-relative: where the bytes are.
        var stored: String
        var fileHash: String
    }

    func run() async throws -> ExitCode {
        let ledger = try home.ledger()
        let location = try LibraryLocation.required(arguments.positionals[0], home: home, mayBeMissing: true)
        let key = OffloadedFile.libraryKey(location.library)
        let within = location.within
        let kept = try await ledger.read { store throws(SQLiteError) in try store.keptVersions(library: key, under: within) }
        let listed = kept.map {
            Listed(path: $0.path, keptAt: $0.keptAt, reason: $0.reason.rawValue, by: $0.byDevice, bytes: $0.size,
                   stored: ".lfsync/\(VersionsArea.area)/\($0.stored)", fileHash: $0.fileHash.hex)
        }
        if arguments[LFSyncCommands.json] {
            console.result(try JSONOutput.render(listed))
            return .success
        }
        guard !listed.isEmpty else {
            console.note("no versions kept of \(arguments.positionals[0]) (a sync keeps what it replaces or deletes there for \(VersionsArea.defaultRetentionDays) days)")
            return .success
        }
        for item in listed {
            console.result("\(JSONOutput.timestamp(item.keptAt))  \(item.reason) by \(item.by)  \(ByteCountText.format(item.bytes))  \(item.path.printable)")
            if console.verbosity == .verbose { console.result("    \(PrintablePath.escape(item.stored))") }
        }
        console.note("'lfsync restore PATH [--at TIME]' puts one back")
        return .success
    }
}

/// `lfsync restore PATH [--at TIME]`: puts back, at PATH (or at each path below it), the
/// latest version the versions area kept — or the latest kept at or before TIME. What stands
/// at the path now is not lost: it moves into the versions area in its turn. The restored
/// file is a change like an edit: the next push or sync carries it to the other devices.
struct RestoreCommand {
    let arguments: ParsedArguments
    let console: Console
    let home = StateHome()

    func run() async throws -> ExitCode {
        let ledger = try home.ledger()
        let location = try LibraryLocation.required(arguments.positionals[0], home: home, mayBeMissing: true)
        let library = location.library
        let key = OffloadedFile.libraryKey(library)
        let within = location.within
        var at: Date?
        if let text = try arguments.value(Self.at) {
            guard let parsed = Self.parseTime(text) else {
                throw UsageError(message: "'\(text)' is not a time", hint: "Give it as 2026-12-05T10:20:00Z, 2026-12-05 10:20 (local time) or 2026-12-05.")
            }
            at = parsed
        }
        let kept = try await ledger.read { store throws(SQLiteError) in try store.keptVersions(library: key, under: within) }
        // Per path, the newest version kept at or before the time asked.
        var chosen: [RelativePath: KeptVersion] = [:]
        for version in kept where at.map({ version.keptAt <= $0 }) ?? true {
            if chosen[version.path].map({ $0.keptAt < version.keptAt }) ?? true { chosen[version.path] = version }
        }
        guard !chosen.isEmpty else {
            throw CommandFailure(message: "no version of \(arguments.positionals[0]) is kept\(at.map { " from before \(JSONOutput.timestamp($0))" } ?? "") ('lfsync versions' lists what is)",
                                 exitCode: .usage)
        }
        let directory = try LibraryDirectory(path: library.path)
        let staging = try StagingArea(library: directory)
        let versions = VersionsArea(library: library)
        let stamp = VersionsArea.stamp()
        var restored = 0, failed = 0
        var replaced: [KeptVersion] = []
        for (path, version) in chosen.sorted(by: { $0.key < $1.key }) {
            do {
                if let kept = try restore(version, at: path, directory: directory, staging: staging, versions: versions, stamp: stamp) { replaced.append(kept) }
                restored += 1
                console.note("restored \(path.printable) as it was kept \(JSONOutput.timestamp(version.keptAt)) (\(version.reason.rawValue) by \(version.byDevice))")
            } catch {
                failed += 1
                console.error("\(path.printable): \(error)")
            }
        }
        let moved = replaced
        try await ledger.write { store throws(SQLiteError) in try store.recordKeptVersions(library: key, moved) }
        if restored > 0 { console.note("the next push or sync carries \(restored == 1 ? "it" : "them") to the other devices") }
        return failed == 0 ? .success : .partial
    }

    /// Puts `version` back at `path`; what stands there goes to the versions area (returned).
    private func restore(_ version: KeptVersion, at path: RelativePath, directory: LibraryDirectory, staging: StagingArea,
                         versions: VersionsArea, stamp: String) throws -> KeptVersion? {
        let target = try LibraryPath.validate(path)
        guard let source = versions.url(ofStored: version.stored) else {
            throw CommandFailure(message: "its kept copy has a name outside the versions area (\(PrintablePath.escape(version.stored))): the ledger is damaged", exitCode: .ioError)
        }
        // The kept copy is checked against the hash recorded when it was kept.
        let manifest = try FileDigester().manifest(absolutePath: source.path, relativePath: path.string)
        guard manifest.fileHash == version.fileHash else {
            throw CommandFailure(message: "its kept copy \(version.stored) no longer has the bytes that were kept (damaged or changed)", exitCode: .ioError)
        }
        let fd = open(source.path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw SystemError.current("open", path: version.stored) }
        let file = OwnedDescriptor(taking: fd)
        let status = try file.status(version.stored)
        let incoming = try IncomingFile.prepare(in: staging, manifest: manifest)
        var offset: UInt64 = 0
        do {
            for (index, chunk) in manifest.chunks.enumerated() {
                try incoming.write(chunkAt: index, bytes: try file.read(count: Int(chunk.length), at: offset, version.stored))
                offset += UInt64(chunk.length)
            }
        } catch {
            incoming.discardIfCreated()
            throw error
        }
        let staged = try incoming.verify()
        let libraryPath = versions.library.path
        try staged.prepareForInstall(modificationTimeNs: status.modificationTimeNs, mode: mode_t(status.permissions & 0o777))
        // What has the name now, as it is now: it is kept, not overwritten.
        let parent = try? directory.openDirectory(target.parentComponents, create: false).directory
        if let parent, let current = try parent.statusOfEntry(named: target.name, target.description) {
            guard current.kind == .regular else {
                try? staged.discard()
                throw CommandFailure(message: "something that is not a file has that name now; it was left alone", exitCode: .ioError)
            }
            let currentHash = try FileDigester().manifest(absolutePath: libraryPath + "/" + path.string, relativePath: path.string).fileHash
            if currentHash == version.fileHash {
                try? staged.discard()
                return nil
            }
            let place = try versions.place(for: target, stamp: stamp, in: directory)
            if let change = try staged.replace(CheckedFile(path: target, status: current), keepingReplacedAt: place.keep) {
                throw CommandFailure(message: "it changed while it was being restored (\(change)); nothing was replaced", exitCode: .ioError)
            }
            return KeptVersion(stored: place.stored, path: path, fileHash: currentHash, size: current.size, keptAt: Date(),
                               reason: .restored, byDevice: "this device")
        }
        guard try staged.place(at: target) == .renamed else {
            throw CommandFailure(message: "something took that name meanwhile; it was left alone", exitCode: .ioError)
        }
        return nil
    }

    /// RFC 3339 (`2026-12-05T10:20:00Z`), or a local `2026-12-05 10:20[:00]`, or a day.
    static func parseTime(_ text: String) -> Date? {
        let iso = ISO8601DateFormatter()
        if let date = iso.date(from: text) { return date }
        iso.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = iso.date(from: text) { return date }
        let local = DateFormatter()
        local.locale = Locale(identifier: "en_US_POSIX")
        local.timeZone = .current
        for format in ["yyyy-MM-dd HH:mm:ss", "yyyy-MM-dd HH:mm", "yyyy-MM-dd'T'HH:mm:ss", "yyyy-MM-dd"] {
            local.dateFormat = format
            if let date = local.date(from: text) {
                // A day alone means the end of that day: what was kept on it.
                return format == "yyyy-MM-dd" ? date.addingTimeInterval(86_399) : date
            }
        }
        return nil
    }
}

extension VersionsCommand: LFSyncCommand {
    static let spec = CommandSpec(
        name: "versions",
        abstract: "List the versions a sync replaced or deleted",
        discussion: "Lists what syncs moved out of PATH (a file of a library, which may be gone now, or a folder: everything below it) into the library's versions area, .lfsync/versions: files replaced by a newer version from another device, deleted by another device's change, or replaced by 'lfsync restore'. Newest first, with when, why and which device's change it was. Versions are kept for 30 days. -v shows where each is kept; --json gives them all as JSON.",
        options: [LFSyncCommands.json.spec],
        arguments: [ArgumentSpec(name: "PATH", help: "A file or folder of a library lfsync knows.", completion: .file)],
        examples: ["lfsync versions ~/Pictures/2024/IMG_1.xmp", "lfsync versions ~/Pictures --json"]
    )
}

extension RestoreCommand: LFSyncCommand {
    static let at = Option<String>("at", valueName: "TIME", help: "The version kept at or before TIME (2026-12-05T10:20:00Z, 2026-12-05 10:20, or a day).")

    static let spec = CommandSpec(
        name: "restore",
        abstract: "Put back a version a sync replaced or deleted",
        discussion: "Puts back at PATH the latest version kept in the library's versions area (with --at, the latest kept at or before TIME); for a folder, each path below it that has one. The kept copy is checked against the hash recorded when it was kept. What stands at the path now is not lost: it moves into the versions area in its turn. The restored file is a change like an edit: the next push or sync carries it to the other devices.",
        options: [at.spec],
        arguments: [ArgumentSpec(name: "PATH", help: "A file or folder of a library lfsync knows (it may be gone now).", completion: .file)],
        examples: ["lfsync restore ~/Pictures/2024/IMG_1.xmp", "lfsync restore ~/Pictures/2024 --at '2026-12-01 18:00'"]
    )
}
