import Foundation
import LFSyncContent
import LFSyncStore
import LFSyncWire

/// Answers a PathStateRequest from a library's history (PROTOCOL.md, "Path versions"):
/// the rows written after the asked change, in change order, each file with its chunk list
/// as the library holds it (from `manifests`: the push's scan, or the scan cache), within
/// `PathStateReport.maxEntries` and `byteBudget`.
struct PathStateAnswers: Sendable {
    let library: String
    let ledger: SyncStateStore
    /// The manifests of these paths' files as the library holds them now (absent: unknown).
    let manifests: @Sendable ([RelativePath]) async -> [RelativePath: FileManifest]

    func answer(_ request: WireMessage.PathStateRequest) async -> WireMessage.PathStateReport {
        let key = library
        let limit = min(Int(request.maxEntries), WireMessage.PathStateReport.maxEntries)
        let read = try? await ledger.read { store throws(SQLiteError) -> (HistoryPosition?, [PathHistoryEntry]) in
            // The position first: rows written after it are still included, and `through`
            // never passes a row that was not sent.
            guard let position = try store.historyPosition(library: key) else { return (nil, []) }
            let since = request.historyID == position.historyID ? request.since : 0
            return (position, try store.pathHistory(library: key, after: since, limit: limit + 1))
        }
        guard let (found, rows) = read, let position = found else {
            return .init(requestID: request.requestID, status: .answered, historyID: 0, through: 0, more: false, entries: [])
        }
        let files = await manifests(rows.prefix(limit).filter { $0.row.version.fileHash != nil }.map(\.path))
        var entries: [WireMessage.PathStateEntry] = []
        var bytes = 0
        for row in rows.prefix(limit) {
            let version = row.row.version
            let content: WireMessage.PathStateEntry.Content
            if let hash = version.fileHash {
                if let manifest = files[row.path], manifest.fileHash == hash, manifest.chunks.count * 36 < WireMessage.PathStateReport.byteBudget / 2 {
                    content = .file(manifest)
                } else {
                    let known = files[row.path]
                    content = .fileHash(hash, size: known?.size ?? 0, modificationTimeNs: known?.modificationTimeNs ?? 0,
                                        mode: UInt16(truncatingIfNeeded: (known?.permissions ?? FileManifest.defaultPermissions) & 0o7777))
                }
            } else {
                content = .deleted
            }
            let entry = WireMessage.PathStateEntry(seq: row.seq, path: row.path, vector: version.vector, changedAt: version.changedAt,
                                                   changedBy: version.changedBy, content: content)
            if !entries.isEmpty, bytes + entry.wireLength > WireMessage.PathStateReport.byteBudget { break }
            bytes += entry.wireLength
            entries.append(entry)
        }
        let more = entries.count < rows.count
        let through = more ? entries.last?.seq ?? 0 : max(entries.last?.seq ?? 0, position.seq)
        return .init(requestID: request.requestID, status: .answered, historyID: position.historyID, through: through, more: more, entries: entries)
    }
}
