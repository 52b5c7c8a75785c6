import Foundation
import LFSyncContent
import LFSyncCrypto

/// Where a library's history stands: its random ID and the last change counter it gave out.
/// A peer keeps one of these per (library, peer) for how far it applied that peer's history.
package struct HistoryPosition: Hashable, Sendable, CustomStringConvertible {
    package var historyID: UInt64
    package var seq: UInt64

    package init(historyID: UInt64, seq: UInt64) {
        self.historyID = historyID
        self.seq = seq
    }

    package var description: String { "\(String(historyID, radix: 16))@\(seq)" }
}

/// One path's row of a library's history, with the change counter it was last written at.
package struct PathHistoryEntry: Hashable, Sendable {
    package var seq: UInt64
    package var path: RelativePath
    package var row: PathHistoryRow

    package init(seq: UInt64, path: RelativePath, row: PathHistoryRow) {
        self.seq = seq
        self.path = path
        self.row = row
    }
}

/// A file a sync moved out of its path into the library's versions area.
package struct KeptVersion: Hashable, Sendable {
    package enum Reason: String, Sendable {
        /// A newer version took the path.
        case replaced
        /// The path was deleted by a change from another device.
        case deleted
        /// `lfsync restore` put an older version back in its place.
        case restored
    }

    /// Its name under `.lfsync/versions`.
    package var stored: String
    package var path: RelativePath
    package var fileHash: Hash256
    package var size: UInt64
    package var keptAt: Date
    package var reason: Reason
    /// Who made the change that moved it (a device name, or "this device").
    package var byDevice: String

    package init(stored: String, path: RelativePath, fileHash: Hash256, size: UInt64, keptAt: Date, reason: Reason, byDevice: String) {
        self.stored = stored
        self.path = path
        self.fileHash = fileHash
        self.size = size
        self.keptAt = keptAt
        self.reason = reason
        self.byDevice = byDevice
    }
}

/// The path history of each library (PROTOCOL.md, "Path versions"): rows are read back as
/// untrusted — a vector or hash that does not decode makes the row count as absent (the path
/// then gets a fresh version from the next scan, which any other device's version meets as a
/// concurrent one: both are kept, nothing is overwritten).
extension SyncStateStore {
    /// The library's history position; nil before its first row was written.
    package func historyPosition(library: String) throws(SQLiteError) -> HistoryPosition? {
        try database.withDatabase { db throws(SQLiteError) in
            try db.cachedStatement("SELECT history_id, last_seq FROM history_library WHERE library = ?")
                .firstRow([.text(library)]) { HistoryPosition(historyID: $0.uint64(at: 0), seq: $0.uint64(at: 1)) }
        }
    }

    /// Every row of the library's history, by path.
    package func pathHistory(library: String) throws(SQLiteError) -> [RelativePath: PathHistoryRow] {
        try database.withDatabase { db throws(SQLiteError) in
            var rows: [RelativePath: PathHistoryRow] = [:]
            try db.cachedStatement("""
                SELECT p.path, p.file_hash, p.vector, p.changed_at_ms, p.changed_by, p.retained_hash, p.seq
                FROM path_history p JOIN history_library l ON l.id = p.library_id WHERE l.library = ?
                """).forEachRow([.text(library)]) { row in
                if let entry = Self.historyEntry(row) { rows[entry.path] = entry.row }
            }
            return rows
        }
    }

    /// The rows of `paths` that the library's history has.
    package func pathHistory(library: String, paths: some Sequence<RelativePath>) throws(SQLiteError) -> [RelativePath: PathHistoryRow] {
        try database.withDatabase { db throws(SQLiteError) in
            let statement = try db.cachedStatement("""
                SELECT p.path, p.file_hash, p.vector, p.changed_at_ms, p.changed_by, p.retained_hash, p.seq
                FROM path_history p JOIN history_library l ON l.id = p.library_id WHERE l.library = ? AND p.path = ?
                """)
            var rows: [RelativePath: PathHistoryRow] = [:]
            for path in paths {
                if let entry = try statement.firstRow([.text(library), .text(path.string)], { Self.historyEntry($0) }) ?? nil {
                    rows[path] = entry.row
                }
            }
            return rows
        }
    }

    /// Whether the library's history has a deletion recorded and its file kept (`retained_hash`).
    package func hasRetainedDeletions(library: String) throws(SQLiteError) -> Bool {
        try database.withDatabase { db throws(SQLiteError) in
            try db.cachedStatement("""
                SELECT 1 FROM path_history p JOIN history_library l ON l.id = p.library_id
                WHERE l.library = ? AND p.file_hash IS NULL AND p.retained_hash IS NOT NULL LIMIT 1
                """).firstRow([.text(library)]) { _ in true } ?? false
        }
    }

    /// The rows written after change `seq`, in the order they were written, at most `limit`.
    package func pathHistory(library: String, after seq: UInt64, limit: Int) throws(SQLiteError) -> [PathHistoryEntry] {
        try database.withDatabase { db throws(SQLiteError) in
            try db.cachedStatement("""
                SELECT p.path, p.file_hash, p.vector, p.changed_at_ms, p.changed_by, p.retained_hash, p.seq
                FROM path_history p JOIN history_library l ON l.id = p.library_id
                WHERE l.library = ? AND p.seq > ? ORDER BY p.seq LIMIT ?
                """).rows([.text(library), .integer(Int64(bitPattern: seq)), .integer(Int64(limit))]) { Self.historyEntry($0) }
                .compactMap { $0 }
        }
    }

    /// Writes `rows` (a path's row replaced), each at the next change counter of the library
    /// (in path order), in one transaction; the library's history is made on its first row.
    /// - Returns: the history's position after the write.
    @discardableResult
    package func recordPathHistory(library: String, _ rows: [RelativePath: PathHistoryRow]) throws(SQLiteError) -> HistoryPosition {
        try database.write { db throws(SQLiteError) in
            let position = try Self.historyLibrary(library, in: db)
            var seq = position.seq
            guard !rows.isEmpty else { return HistoryPosition(historyID: position.historyID, seq: seq) }
            let insert = try db.cachedStatement("""
                INSERT OR REPLACE INTO path_history (library_id, path, file_hash, vector, changed_at_ms, changed_by, retained_hash, seq)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """)
            for (path, row) in rows.sorted(by: { $0.key < $1.key }) {
                seq += 1
                let version = row.version
                try insert.execute([
                    .integer(position.id), .text(path.string), version.fileHash.map { .blob($0.bytes) } ?? .null,
                    .blob(version.vector.encoded()), .integer(version.changedAt), .integer(Int64(bitPattern: version.changedBy)),
                    row.retainedHash.map { .blob($0.bytes) } ?? .null, .integer(Int64(bitPattern: seq)),
                ])
            }
            try db.cachedStatement("UPDATE history_library SET last_seq = ? WHERE id = ?")
                .execute([.integer(Int64(bitPattern: seq)), .integer(position.id)])
            return HistoryPosition(historyID: position.historyID, seq: seq)
        }
    }

    /// How far this device applied `peer`'s history into the library; nil if never.
    package func pathProgress(library: String, peer: PeerKey) throws(SQLiteError) -> HistoryPosition? {
        try database.withDatabase { db throws(SQLiteError) in
            try db.cachedStatement("""
                SELECT g.history_id, g.seq FROM path_progress g JOIN history_library l ON l.id = g.library_id
                WHERE l.library = ? AND g.peer = ?
                """).firstRow([.text(library), .text(peer.rawValue)]) { HistoryPosition(historyID: $0.uint64(at: 0), seq: $0.uint64(at: 1)) }
        }
    }

    package func recordPathProgress(library: String, peer: PeerKey, _ position: HistoryPosition) throws(SQLiteError) {
        try database.write { db throws(SQLiteError) in
            let library = try Self.historyLibrary(library, in: db)
            try db.cachedStatement("INSERT OR REPLACE INTO path_progress (library_id, peer, history_id, seq) VALUES (?, ?, ?, ?)")
                .execute([.integer(library.id), .text(peer.rawValue), .integer(Int64(bitPattern: position.historyID)),
                          .integer(Int64(bitPattern: position.seq))])
        }
    }

    // MARK: Kept versions

    package func recordKeptVersions(library: String, _ versions: [KeptVersion]) throws(SQLiteError) {
        guard !versions.isEmpty else { return }
        try database.write { db throws(SQLiteError) in
            let library = try Self.historyLibrary(library, in: db)
            let insert = try db.cachedStatement("""
                INSERT OR REPLACE INTO kept_version (library_id, stored, path, file_hash, size, kept_at_ms, reason, by_device)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """)
            for version in versions {
                try insert.execute([
                    .integer(library.id), .text(version.stored), .text(version.path.string), .blob(version.fileHash.bytes),
                    .integer(Int64(bitPattern: version.size)), .integer(Self.milliseconds(version.keptAt)),
                    .text(version.reason.rawValue), .text(version.byDevice),
                ])
            }
        }
    }

    /// The versions kept of the library's paths, newest first; with `under`, only those of
    /// that path or of paths below it.
    package func keptVersions(library: String, under prefix: RelativePath? = nil) throws(SQLiteError) -> [KeptVersion] {
        try database.withDatabase { db throws(SQLiteError) in
            try db.cachedStatement("""
                SELECT k.stored, k.path, k.file_hash, k.size, k.kept_at_ms, k.reason, k.by_device
                FROM kept_version k JOIN history_library l ON l.id = k.library_id WHERE l.library = ?
                ORDER BY k.kept_at_ms DESC, k.stored
                """).rows([.text(library)]) { row -> KeptVersion? in
                guard let stored = row.text(at: 0), let path = row.text(at: 1),
                      let hash = row.blob(at: 2).flatMap(Hash256.init(bytes:)),
                      let reason = row.text(at: 5).flatMap(KeptVersion.Reason.init(rawValue:))
                else { return nil }
                return KeptVersion(stored: stored, path: RelativePath(path), fileHash: hash, size: UInt64(bitPattern: row.int64(at: 3)),
                                   keptAt: Self.date(milliseconds: row.int64(at: 4)), reason: reason, byDevice: row.text(at: 6) ?? "")
            }
            .compactMap { $0 }
            .filter { version in
                guard let prefix, !prefix.string.isEmpty else { return true }
                return version.path == prefix || version.path.string.utf8.starts(with: (prefix.string + "/").utf8)
            }
        }
    }

    /// Per library with kept versions: how many, and their bytes.
    package func keptVersionTotals() throws(SQLiteError) -> [(library: String, count: Int, bytes: UInt64)] {
        try database.withDatabase { db throws(SQLiteError) in
            try db.cachedStatement("""
                SELECT l.library, COUNT(*), SUM(k.size) FROM kept_version k JOIN history_library l ON l.id = k.library_id
                GROUP BY l.library ORDER BY l.library
                """).rows([]) { row in (row.text(at: 0) ?? "", Int(row.int64(at: 1)), UInt64(bitPattern: row.int64(at: 2))) }
        }
    }

    package func forgetKeptVersions(library: String, stored: [String]) throws(SQLiteError) {
        guard !stored.isEmpty else { return }
        try database.write { db throws(SQLiteError) in
            let delete = try db.cachedStatement("""
                DELETE FROM kept_version WHERE stored = ? AND library_id = (SELECT id FROM history_library WHERE library = ?)
                """)
            for name in stored { try delete.execute([.text(name), .text(library)]) }
        }
    }

    // MARK: Rows

    /// The library's history row, made (with a random history ID) if it has none.
    private static func historyLibrary(_ library: String, in db: SQLiteDatabase) throws(SQLiteError) -> (id: Int64, historyID: UInt64, seq: UInt64) {
        let select = try db.cachedStatement("SELECT id, history_id, last_seq FROM history_library WHERE library = ?")
        if let found = try select.firstRow([.text(library)], { ($0.int64(at: 0), $0.uint64(at: 1), $0.uint64(at: 2)) }) {
            return found
        }
        let historyID = UInt64.random(in: 1...UInt64(Int64.max))
        try db.cachedStatement("INSERT INTO history_library (library, history_id, last_seq) VALUES (?, ?, 0)")
            .execute([.text(library), .integer(Int64(bitPattern: historyID))])
        guard let made = try select.firstRow([.text(library)], { ($0.int64(at: 0), $0.uint64(at: 1), $0.uint64(at: 2)) }) else {
            throw .corrupt(message: "history row for \(library) vanished")
        }
        return made
    }

    /// Columns path, file_hash, vector, changed_at_ms, changed_by, retained_hash, seq.
    private static func historyEntry(_ row: SQLiteRow) -> PathHistoryEntry? {
        guard let path = row.text(at: 0), let vector = row.blob(at: 2).flatMap(VersionVector.init(encoded:)) else { return nil }
        let content: PathVersion.Content
        if row.isNull(at: 1) {
            content = .deleted
        } else {
            guard let hash = row.blob(at: 1).flatMap(Hash256.init(bytes:)) else { return nil }
            content = .file(hash)
        }
        var retained: Hash256?
        if !row.isNull(at: 5) {
            guard let hash = row.blob(at: 5).flatMap(Hash256.init(bytes:)) else { return nil }
            retained = hash
        }
        let version = PathVersion(content: content, vector: vector, changedAt: row.int64(at: 3),
                                  changedBy: UInt64(bitPattern: row.int64(at: 4)))
        return PathHistoryEntry(seq: row.uint64(at: 6), path: RelativePath(path), row: PathHistoryRow(version: version, retainedHash: retained))
    }
}
