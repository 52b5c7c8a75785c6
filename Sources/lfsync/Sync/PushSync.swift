import Foundation
import LocalFirstSync
import LFSyncContent
import LFSyncCrypto
import LFSyncLanding
import LFSyncStore
import LFSyncWire

/// The sync that follows a push to each peer that keeps path versions (PROTOCOL.md,
/// "Syncing"): this library's history is brought up to the scan the push made, then each
/// peer is asked to apply it (SyncRequest), reading this device's path versions and the
/// chunks it lacks over the same connection. The push placed the new files; the sync
/// applies edits, renames, and deletions when asked.
struct PushSync {
    let library: URL
    let index: LibraryIndex
    let ledger: SyncStateStore
    let sync: LocalSync
    let device: UInt64

    struct Result: Sendable {
        var peer: Peer
        var reply: WireMessage.SyncReply?
        var error: String?
    }

    /// Brings this library's history up to `scan` (see `HistoryRecorder.record`:
    /// `settledOnly` false for an explicit push, true for `watch`).
    func record(_ scan: LibraryScan, settledOnly: Bool, stillChanging: @escaping @Sendable (RelativePath) -> Bool = { _ in false }) async throws -> HistoryRecorder.Outcome {
        try await HistoryRecorder(library: library, ledger: ledger, device: device, awaitingSync: sync.placementsAwaitingSync.paths())
            .record(scan, settledOnly: settledOnly, stillChanging: stillChanging)
    }

    /// Asks each of `peers` that keeps path versions to apply this library's history.
    /// - Parameter manifests: the library's files by path as it holds them now (the push's
    ///   scan; the scan cache).
    func requestSyncs(with peers: [Peer], deletions: Bool, maxDeletions: UInt32?,
                      manifests: @escaping @Sendable ([RelativePath]) async -> [RelativePath: FileManifest]) async -> [Result] {
        let answers = PathStateAnswers(library: OffloadedFile.libraryKey(library), ledger: ledger, manifests: manifests)
        let directory = try? LibraryDirectory(path: library.path)
        let index = index
        let source = SyncSource(
            pathStates: { await answers.answer($0) },
            chunk: { hash, length in
                guard let directory else { return nil }
                return RestoreOffloaded.localChunk(ChunkRef(length: length, hash: hash), in: directory, index: index)
            })
        let flags: WireMessage.SyncRequest.Flags = deletions ? [.deletions] : []
        // Every peer at once: one whose link went down holds up none of the others.
        let sync = sync
        return await withTaskGroup(of: Result?.self) { group in
            for peer in peers {
                group.addTask {
                    guard await sync.keepsPathVersions(peer) else { return nil }
                    do {
                        let reply = try await sync.requestSync(flags, maxDeletions: maxDeletions ?? WireMessage.SyncRequest.unlimited, with: peer,
                                                               answeringFrom: source)
                        return Result(peer: peer, reply: reply)
                    } catch {
                        return Result(peer: peer, reply: nil, error: "\(error)")
                    }
                }
            }
            var results: [Result] = []
            for await result in group { if let result { results.append(result) } }
            return results.sorted { $0.peer.name < $1.peer.name }
        }
    }

    /// The manifests of a scan's files, by path, for `requestSyncs`.
    static func manifests(of scan: LibraryScan) -> @Sendable ([RelativePath]) async -> [RelativePath: FileManifest] {
        var all: [RelativePath: FileManifest] = [:]
        for asset in scan.assets { for file in asset.files { all[file.manifest.path] = file.manifest } }
        let known = all
        return { paths in
            var found: [RelativePath: FileManifest] = [:]
            for path in paths { found[path] = known[path] }
            return found
        }
    }

    /// The manifests the scan cache holds for these paths, for `requestSyncs`.
    static func cachedManifests(_ index: LibraryIndex) -> @Sendable ([RelativePath]) async -> [RelativePath: FileManifest] {
        let cache = index.scanCache
        return { paths in ((try? cache.entries(paths: paths)) ?? [:]).mapValues(\.manifest) }
    }

    /// One line for a peer's sync, as push and watch print it.
    static func summary(_ result: Result) -> String {
        guard let reply = result.reply else { return "sync failed: \(result.error ?? "no answer")" }
        let counts = reply.counts
        var parts: [String] = []
        if counts.taken > 0 { parts.append("\(counts.taken) updated") }
        if counts.deleted > 0 { parts.append("\(counts.deleted) deleted (kept in its versions area)") }
        if counts.conflicts > 0 { parts.append("\(counts.conflicts) conflict\(counts.conflicts == 1 ? "" : "s") (both kept)") }
        if counts.retained > 0 { parts.append("\(counts.retained) deletion\(counts.retained == 1 ? "" : "s") not applied (push --delete applies them)") }
        if counts.bytesFetched > 0 { parts.append("\(ByteCountText.format(counts.bytesFetched)) of changed chunks") }
        let what = parts.isEmpty ? "nothing to change" : parts.joined(separator: ", ")
        switch reply.status {
        case .synced: return "synced: \(what)"
        case .partial: return "synced in part: \(what); \(reply.reason ?? "")"
        case .declined: return "sync declined, the push was a copy (an edit lands beside the old file): \(reply.reason ?? "")"
        case .failed: return "sync failed: \(reply.reason ?? "")"
        }
    }
}
