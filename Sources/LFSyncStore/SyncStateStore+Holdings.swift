import Foundation
import LFSyncContent
import LFSyncCrypto

/// What the ledger says about where contents are: per peer with their times
/// (`lfsync whereis`), when this device last had a content confirmed anywhere (a holding
/// check's answer), and the files offloaded from a library.
extension SyncStateStore {
    /// The rows of `contents` with `peer`, in one read.
    package func entries(of contents: [ContentID], for peer: PeerKey) throws(SQLiteError) -> [ContentID: Entry] {
        let wanted = Set(contents)
        guard !wanted.isEmpty else { return [:] }
        return try database.withDatabase { db throws(SQLiteError) in
            let live = try LedgerRuns.live(in: db)
            var entries: [ContentID: Entry] = [:]
            try db.cachedStatement("SELECT content_id, state, run, reason, bytes, updated_at_ms FROM sync_state WHERE peer = ?")
                .forEachRow([.text(peer.rawValue)]) { row in
                    guard let content = Self.contentID(in: row), wanted.contains(content) else { return }
                    entries[content] = Self.entry(in: row, at: 1, content: content, peer: peer, live: live)
                }
            return entries
        }
    }

    /// For each of `contents` that some peer's row says `synced`, the latest such time:
    /// when a copy of it was last confirmed verified, here or there.
    package func lastSynced(of contents: [ContentID]) throws(SQLiteError) -> [ContentID: Date] {
        let wanted = Set(contents)
        guard !wanted.isEmpty else { return [:] }
        return try database.withDatabase { db throws(SQLiteError) in
            var latest: [ContentID: Int64] = [:]
            // One index lookup per content (sync_state_synced_by_content).
            let statement = try db.cachedStatement("SELECT max(updated_at_ms) FROM sync_state WHERE content_id = ? AND state = 'synced'")
            for content in wanted {
                try statement.forEachRow([.blob(content.hash.bytes)]) { row in
                    if let time = row.optionalInt64(at: 0) { latest[content] = time }
                }
            }
            return latest.mapValues(Self.date(milliseconds:))
        }
    }

    // MARK: Offloaded files

    /// Records `files` as offloaded, in one transaction; a row for the same path is replaced.
    package func recordOffloaded(_ files: [OffloadedFile]) throws(SQLiteError) {
        guard !files.isEmpty else { return }
        try database.write { db throws(SQLiteError) in
            let insert = try db.cachedStatement("""
                INSERT OR REPLACE INTO offloaded (library, path, content_id, size, holders, at_ms, manifest) VALUES (?, ?, ?, ?, ?, ?, ?)
                """)
            for file in files {
                try insert.execute([
                    .text(file.library), .text(file.path.string), .blob(file.content.hash.bytes),
                    .integer(Int64(bitPattern: file.size)), .text(file.holders.joined(separator: " ")), .integer(Self.milliseconds(file.at)),
                    file.manifest.map { .blob($0.encoded()) } ?? .null,
                ])
            }
        }
    }

    /// The files offloaded from the library at `library`, by path.
    package func offloaded(inLibrary library: String) throws(SQLiteError) -> [OffloadedFile] {
        try database.withDatabase { db throws(SQLiteError) in
            try db.cachedStatement("SELECT path, content_id, size, holders, at_ms, manifest FROM offloaded WHERE library = ? ORDER BY path")
                .rows([.text(library)]) { row -> OffloadedFile? in
                    guard let path = row.text(at: 0), let content = Self.contentID(in: row, at: 1) else { return nil }
                    let size = UInt64(bitPattern: row.int64(at: 2))
                    // Read back as untrusted: a manifest that does not decode, or describes another
                    // file, is as good as none (the row is then restored as an old one is).
                    let manifest = row.blob(at: 5).flatMap { try? FileManifest(encoded: $0) }.flatMap {
                        $0.path == RelativePath(path) && $0.size == size ? $0 : nil
                    }
                    return OffloadedFile(
                        library: library, path: RelativePath(path), content: content, size: size,
                        holders: (row.text(at: 3) ?? "").split(separator: " ").map(String.init), at: Self.date(milliseconds: row.int64(at: 4)),
                        manifest: manifest)
                }
                .compactMap { $0 }
        }
    }

    /// Every offloaded file on this device, in every library (`lfsync status`).
    package func allOffloaded() throws(SQLiteError) -> [OffloadedFile] {
        let libraries = try database.withDatabase { db throws(SQLiteError) in
            try db.cachedStatement("SELECT library FROM offloaded GROUP BY library").rows([]) { $0.text(at: 0) }.compactMap { $0 }
        }
        var files: [OffloadedFile] = []
        for library in libraries { files += try offloaded(inLibrary: library) }
        return files
    }

    /// Whether any library on this device has `contents` offloaded: those are not held here.
    package func offloadedContents(among contents: [ContentID]) throws(SQLiteError) -> Set<ContentID> {
        let wanted = Set(contents)
        guard !wanted.isEmpty else { return [] }
        return try database.withDatabase { db throws(SQLiteError) in
            let statement = try db.cachedStatement("SELECT 1 FROM offloaded WHERE content_id = ? LIMIT 1")
            var found = Set<ContentID>()
            for content in wanted where try statement.firstRow([.blob(content.hash.bytes)], { _ in true }) == true {
                found.insert(content)
            }
            return found
        }
    }

    /// Forgets offloaded rows of `library` (files that are back, or that the user cleared).
    package func forgetOffloaded(inLibrary library: String, paths: [RelativePath]) throws(SQLiteError) {
        guard !paths.isEmpty else { return }
        try database.write { db throws(SQLiteError) in
            let delete = try db.cachedStatement("DELETE FROM offloaded WHERE library = ? AND path = ?")
            for path in paths { try delete.execute([.text(library), .text(path.string)]) }
        }
    }
}
