import LFSyncContent
import LFSyncCrypto

/// What each content this device received is made of (the `content_file` table): its files'
/// roles and file hashes, in canonical order. The content ID is a hash of exactly this list,
/// so a row set that does not hash to its content ID is damaged and ignored.
extension SyncStateStore {
    /// One content's files: role and file hash, in canonical order.
    package typealias Composition = [(role: FileRole, fileHash: Hash256)]

    /// Records the files of `contents` (a content already recorded is left as it is: its
    /// files cannot differ, the content ID being their hash).
    package func recordCompositions(_ contents: [(content: ContentID, files: Composition)]) throws(SQLiteError) {
        guard !contents.isEmpty else { return }
        try database.write { db throws(SQLiteError) in
            let insert = try db.cachedStatement("INSERT OR IGNORE INTO content_file (content_id, position, role, file_hash) VALUES (?, ?, ?, ?)")
            for (content, files) in contents {
                for (position, file) in files.enumerated() {
                    try insert.execute([.blob(content.hash.bytes), .integer(Int64(position)), .integer(Int64(file.role.rawValue)), .blob(file.fileHash.bytes)])
                }
            }
        }
    }

    /// The recorded files of each of `contents` that has them.
    package func compositions(of contents: [ContentID]) throws(SQLiteError) -> [ContentID: Composition] {
        guard !contents.isEmpty else { return [:] }
        return try database.withDatabase { db throws(SQLiteError) in
            let select = try db.cachedStatement("SELECT role, file_hash FROM content_file WHERE content_id = ? ORDER BY position")
            var found: [ContentID: Composition] = [:]
            for content in Set(contents) {
                var files: Composition = []
                var usable = true
                try select.forEachRow([.blob(content.hash.bytes)]) { row in
                    guard let role = UInt8(exactly: row.int64(at: 0)).flatMap(FileRole.init(rawValue:)),
                          let hash = row.blob(at: 1).flatMap({ Hash256(bytes: $0) }) else { usable = false; return }
                    files.append((role, hash))
                }
                // Read back as untrusted: only a list that hashes to its content ID is it.
                if usable, !files.isEmpty, ContentID(files: files.map { ($0.role, $0.fileHash) }) == content { found[content] = files }
            }
            return found
        }
    }
}
