import Foundation
import LFSyncContent
import LFSyncStore

/// Once per library, the change of content hashes (PROTOCOL.md, "Hashes": keyed, a file
/// named by its chunk list) for a library that an earlier lfsync indexed and synced.
///
/// Opening such a library's index emptied its scan cache and chunk index (their rows named
/// bytes by the old hashes) and marked it (`ScanCache.awaitsHashUpgrade`). This indexes the
/// library again with the new hashes, reads each distinct file once more to learn the ID
/// the old hashes gave its content, and moves every ledger row from the old ID to the new
/// one, for every peer. So `status` still says synced for everything that was, and a repeat
/// push after both sides upgraded moves no chunk.
///
/// It also keeps what the old cache knew worth knowing: a file whose bytes no longer hash to
/// the old record although its size and mtime are the same is reported as damaged.
///
/// Crash-safe: the mark goes only after the rows moved, and moving them again finds none
/// left; a run cut short starts over from the scan at the next use.
public enum LibraryHashUpgrade {
    public enum Progress: Sendable {
        /// Indexing the library with the new hashes.
        case indexing(ScanProgress)
        /// Reading each distinct file again for the ID the old hashes gave it.
        case naming(done: Int, total: Int)
    }

    public struct Report: Sendable, Equatable {
        /// Files indexed with the new hashes.
        public var files: Int
        /// Contents found under both names.
        public var contents: Int
        /// Ledger rows that now stand under a new content ID.
        public var rowsCarriedOver: Int
        /// Files whose bytes no longer hash to what the old cache recorded although their
        /// size and mtime are the same: changed behind the file system's back (bit rot, or a
        /// tool that put the mtime back). Their ledger rows, about the old bytes, stay behind.
        public var damaged: [RelativePath]
        public var seconds: Double
    }

    /// Whether the library of `cache` still waits for it.
    public static func isNeeded(_ cache: ScanCache) throws -> Bool {
        try cache.awaitsHashUpgrade()
    }

    /// Upgrades the library at `root` if its index waits for it; nil if it does not.
    /// - Parameter exclusions: the rules the library is scanned by (excluded files were
    ///   never offered, so they have no ledger rows worth carrying).
    public static func runIfNeeded(
        library root: URL, cache: ScanCache, chunkIndex: ChunkIndex, ledger: SyncStateStore,
        exclusions: ScanExclusions = ScanExclusions(), progress: @escaping @Sendable (Progress) -> Void = { _ in }
    ) async throws -> Report? {
        guard try isNeeded(cache) else { return nil }
        let started = ContinuousClock.now
        let recorded = try cache.legacyFileHashes()
        let scan = try await LibraryScanner(root: root, cache: cache, chunkIndex: chunkIndex, exclusions: exclusions)
            .scan { progress(.indexing($0)) }
        let names = await LegacyContentIDs.of(scan.assets, root: root) { progress(.naming(done: $0, total: $1)) }
        var damaged: [RelativePath] = []
        for file in scan.assets.lazy.flatMap(\.files) {
            let manifest = file.manifest
            guard let old = recorded[manifest.path], let now = names.files[manifest.fileHash],
                  old.size == manifest.size, old.modificationTimeNs == manifest.modificationTimeNs
            else { continue }
            if old.fileHash != now { damaged.append(manifest.path) }
        }
        let moved = try ledger.carryOver(names.contents.map { (from: $0.value, to: $0.key) })
        try cache.finishHashUpgrade()
        let elapsed = (ContinuousClock.now - started).components
        return Report(files: scan.statistics.files, contents: names.contents.count, rowsCarriedOver: moved, damaged: damaged.sorted(),
                      seconds: Double(elapsed.seconds) + Double(elapsed.attoseconds) * 1e-18)
    }
}
