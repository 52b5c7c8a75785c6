import Foundation

/// Places received assets into a library folder — the Linux counterpart of
/// "save to photo library". Files land at their library-relative paths, an
/// asset's files (Live Photo pairs, sidecars) together, never overwriting
/// anything (DESIGN.md §6).
///
/// Before asking a peer for a chunk it looks for it locally: in staging
/// (an interrupted earlier transfer) and, through the chunk index, anywhere
/// in the library (a renamed or copied file). Every local chunk is re-hashed
/// before use.
public final class LibraryImporter: Sendable {
    public let directory: LibraryDirectory
    public let staging: StagingArea
    private let installer: LibraryInstaller
    private let chunkIndex: ChunkIndex?
    private let scanCache: ScanCache?

    /// - Parameter scanCache: the library's scan cache; received files are entered in it,
    ///   so the next scan of the library (a restarted `serve`) does not hash them again.
    public init(library: URL, chunkIndex: ChunkIndex? = nil, scanCache: ScanCache? = nil) throws(ReceiveError) {
        directory = try LibraryDirectory(path: library.path)
        staging = try StagingArea(library: directory)
        installer = LibraryInstaller(staging: staging)
        self.chunkIndex = chunkIndex
        self.scanCache = scanCache
        // Files finished but not installed when we last stopped go back to being partials.
        _ = try staging.recoverInterruptedFiles()
    }

    public var rootPath: String { directory.rootPath }

    /// Opens staging for every file of `assets` and works out which chunks must come from the peer.
    func plan(_ assets: [Asset]) throws(ReceiveError) -> ReceivePlan {
        var plan = ReceivePlan()
        var neededBytes: UInt64 = 0
        for asset in assets {
            var files: [IncomingFile?] = []
            var missing: [Int: Set<Int>] = [:]
            for (fileIndex, file) in asset.files.enumerated() {
                // The common repeat-push case: the very file is already in place. No staging, no copy.
                if isInPlace(file.manifest) {
                    files.append(nil)
                    missing[fileIndex] = []
                    continue
                }
                let incoming = try IncomingFile.open(in: staging, manifest: file.manifest)
                let present = try incoming.verifiedChunks()
                var stillMissing = Set<Int>()
                var offset: UInt64 = 0
                for (chunkIndex, chunk) in file.manifest.chunks.enumerated() {
                    defer { offset += UInt64(chunk.length) }
                    if present.contains(chunkIndex) { continue }
                    if try copyLocally(chunk, index: chunkIndex, into: incoming) { continue }
                    stillMissing.insert(chunkIndex)
                    neededBytes += UInt64(chunk.length)
                }
                files.append(incoming)
                missing[fileIndex] = stillMissing
            }
            plan.assets.append(.init(asset: asset, files: files, missing: missing))
        }
        try directory.ensureSpace(for: neededBytes)
        plan.neededBytes = neededBytes
        return plan
    }

    /// True when the library already holds exactly this file at its path: the scan
    /// cache knows the path under the same file hash, and the file still shows the
    /// status it had then. The file hash, not the chunk list, because it is what this
    /// device verified itself, by hashing the file or every byte it received.
    private func isInPlace(_ manifest: FileManifest) -> Bool {
        guard let scanCache, let path = try? LibraryPath.validate(manifest.path),
              let status = try? FileStatus.of(path: directory.rootPath + "/" + path.string),
              status.kind == .regular, status.size == manifest.size,
              let entry = try? scanCache.entry(path: path.string)
        else { return false }
        return entry.manifest.fileHash == manifest.fileHash && entry.isUnchanged(status)
    }

    private func copyLocally(_ chunk: ChunkRef, index: Int, into file: IncomingFile) throws(ReceiveError) -> Bool {
        guard let chunkIndex, let locations = try? chunkIndex.locations(of: chunk.hash) else { return false }
        for location in locations where location.length == chunk.length {
            if try file.copyChunk(at: index, from: .library(location)) { return true }
        }
        return false
    }

    /// Verifies every file of `asset` and lands them together.
    func install(_ asset: Asset, files: [IncomingFile?]) throws(ReceiveError) -> [InstalledFile] {
        var staged: [(StagedFile, LibraryPath)] = []
        var results: [InstalledFile?] = []
        for (file, incoming) in zip(asset.files, files) {
            let path = try Self.validated(file.manifest.path)
            if let incoming {
                staged.append((try incoming.finish(), path))
                results.append(nil)
            } else {
                results.append(.alreadyPresent(path))
            }
        }
        var installed = try installer.install(staged).makeIterator()
        let all = results.compactMap { $0 ?? installed.next() }
        recordInIndex(asset, all, chunkListsVerified: files.map { $0?.everyChunkVerified })
        return all
    }

    /// Newly landed files become local chunk sources for the next transfer (a rename, a resend).
    /// A file whose chunk list is only the peer's word is recorded all the same: the chunk
    /// index is a hint re-verified on every use, and the scan cache row proves (by file hash)
    /// that the file is in place — but it is marked, so that sending it on checks each chunk.
    /// - Parameter chunkListsVerified: per file; nil for a file that was already in place,
    ///   whose rows are already right (the offer's chunk list must not overwrite them).
    private func recordInIndex(_ asset: Asset, _ installed: [InstalledFile], chunkListsVerified: [Bool?]) {
        guard chunkIndex != nil || scanCache != nil else { return }
        var records: [IndexedFile] = []
        for ((file, result), verified) in zip(zip(asset.files, installed), chunkListsVerified) {
            guard let chunkListVerified = verified else { continue }
            let path = result.storedPath.string
            guard let status = try? FileStatus.of(path: directory.rootPath + "/" + path), status.kind == .regular else { continue }
            var manifest = file.manifest
            manifest.path = path
            manifest.modificationTimeNs = status.modificationTimeNs
            let identifier = AppleContentIdentifierReader.contentIdentifier(ofFileAt: URL(fileURLWithPath: directory.rootPath + "/" + path))
            // The bytes were verified against the file hash just before we renamed them in.
            records.append(IndexedFile(manifest: manifest, inode: status.inode, contentIdentifier: identifier,
                                       changeTimeNs: status.changeTimeNs, chunkListVerified: chunkListVerified))
        }
        try? chunkIndex?.recordAll(records)
        try? scanCache?.storeAll(records)
    }

    private static func validated(_ path: String) throws(ReceiveError) -> LibraryPath {
        do { return try LibraryPath.validate(path) } catch { throw .pathRejected(error) }
    }
}

/// What must come from the peer for an accepted offer.
struct ReceivePlan {
    struct Item {
        var asset: Asset
        /// nil where the file is already in place at its path.
        var files: [IncomingFile?]
        /// Per file index, the chunk indices the peer must send.
        var missing: [Int: Set<Int>]
    }

    var assets: [Item] = []
    var neededBytes: UInt64 = 0
}
