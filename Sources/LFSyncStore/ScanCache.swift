import LFSyncContent

/// `(path, size, mtime_ns, inode, ctime_ns) → FileManifest` for one library:
/// what lets a rescan of an unchanged library read no file content.
///
/// The stored manifest is untrusted on the way back in (the file on disk may
/// have been damaged or edited): a blob that does not decode, or decodes to a
/// manifest that disagrees with its row, is a cache miss — the file is simply
/// hashed again — never an error and never a crash.
///
/// For whole-library rescans use the batch calls: `forEachEntry(_:)` is one
/// query streamed in path order (a library of 200,000 files is never held as
/// one dictionary), `storeAll(_:)` one transaction over one prepared statement.
public final class ScanCache: Sendable {
    private let database: SerializedDatabase
    private let libraryID: Int64

    init(database: SerializedDatabase, libraryID: Int64) {
        self.database = database
        self.libraryID = libraryID
    }

    /// The manifest stored for `path`, if its stamp matches exactly.
    public func cachedManifest(path: RelativePath, size: UInt64, mtimeNs: Int64, inode: UInt64) throws(SQLiteError) -> FileManifest? {
        try cachedManifest(path: path, stamp: FileStamp(size: size, modificationTimeNs: mtimeNs, inode: inode))
    }

    package func cachedManifest(path: RelativePath, stamp: FileStamp) throws(SQLiteError) -> FileManifest? {
        let libraryID = libraryID
        let blob = try database.withDatabase { db throws(SQLiteError) in
            try db.cachedStatement("""
                SELECT manifest FROM scan_cache
                WHERE library_id = ? AND path = ? AND size = ? AND mtime_ns = ? AND inode = ?
                """)
                .firstRow([
                    .integer(libraryID), .text(path.string), .integer(unsigned: stamp.size),
                    .integer(stamp.modificationTimeNs), .integer(unsigned: stamp.inode),
                ]) { $0.blob(at: 0) } ?? nil
        }
        guard let blob else { return nil }
        return Self.decode(blob, path: path, stamp: stamp)?.manifest
    }

    /// True while this library's cache was emptied by the change of content hashes and its
    /// ledger rows still await their new content IDs (see `LibraryHashUpgrade`).
    public func awaitsHashUpgrade() throws(SQLiteError) -> Bool {
        let libraryID = libraryID
        return try database.withDatabase { db throws(SQLiteError) in
            try db.cachedStatement("SELECT 1 FROM hash_upgrade WHERE library_id = ?").firstRow([.integer(libraryID)]) { _ in true } ?? false
        }
    }

    /// Records that the upgrade is done: the library was indexed with the new hashes and
    /// its ledger rows carried over. The old rows' hashes go with the mark.
    public func finishHashUpgrade() throws(SQLiteError) {
        let libraryID = libraryID
        try database.write { db throws(SQLiteError) in
            try db.cachedStatement("DELETE FROM legacy_scan_cache WHERE library_id = ?").execute([.integer(libraryID)])
            try db.cachedStatement("DELETE FROM hash_upgrade WHERE library_id = ?").execute([.integer(libraryID)])
        }
    }

    /// What the cache held before the change of content hashes, per path: the size and
    /// mtime a file had and the old hash of its bytes (unkeyed BLAKE2b-256 of the whole
    /// file). Empty once the upgrade is done.
    package func legacyFileHashes() throws(SQLiteError) -> [RelativePath: LegacyFileHash] {
        let libraryID = libraryID
        return try database.withDatabase { db throws(SQLiteError) in
            var hashes: [RelativePath: LegacyFileHash] = [:]
            try db.cachedStatement("SELECT path, size, mtime_ns, manifest FROM legacy_scan_cache WHERE library_id = ?")
                .forEachRow([.integer(libraryID)]) { row throws(SQLiteError) in
                    guard let path = row.relativePath(at: 0), let blob = row.blob(at: 3),
                          let hash = LegacyFileHash.fileHash(inVersion1Manifest: blob) else { return }
                    hashes[path] = LegacyFileHash(size: row.uint64(at: 1), modificationTimeNs: row.int64(at: 2), fileHash: hash)
                }
            return hashes
        }
    }

    /// The entry for `path`, whatever its stamp: the caller compares it with what it sees on disk.
    public func entry(path: RelativePath) throws(SQLiteError) -> IndexedFile? {
        try entries(paths: [path])[path]
    }

    /// The entries of `paths` that have one (each whatever its stamp), looked
    /// up in one read transaction: a receiver checks every file of an offer.
    public func entries(paths: [RelativePath]) throws(SQLiteError) -> [RelativePath: IndexedFile] {
        try lookUp(paths, columns: "size, mtime_ns, inode, manifest, content_identifier, ctime_ns") { row, path in
            Self.entry(row, path: path, firstColumn: 0)
        }
    }

    /// The file hashes the cache holds for `paths`, each with the status it was
    /// known under, in one read transaction: a receiver asks this for every file
    /// of an offer that already stands at its path. Cheaper than `entries(paths:)`
    /// by the part that mattered on a repeat push of 20,000 files: no chunk list
    /// is decoded and no manifest built (see `FileManifest.fileHash(inEncoded:)`).
    package func fileHashes(paths: [RelativePath]) throws(SQLiteError) -> [RelativePath: CachedFileHash] {
        try lookUp(paths, columns: "size, mtime_ns, inode, ctime_ns, manifest") { row, path in
            let stamp = FileStamp(size: row.uint64(at: 0), modificationTimeNs: row.int64(at: 1), inode: row.uint64(at: 2))
            guard let blob = row.blob(at: 4),
                  let hash = FileManifest.fileHash(inEncoded: blob, path: path, size: stamp.size, modificationTimeNs: stamp.modificationTimeNs)
            else { return nil }
            return CachedFileHash(fileHash: hash, stamp: stamp, changeTimeNs: row.isNull(at: 3) ? nil : row.int64(at: 3))
        }
    }

    /// The rows of `paths` that have one, each read by `decode` (nil: unusable),
    /// in one read transaction over one prepared statement.
    private func lookUp<Found: Sendable>(
        _ paths: [RelativePath], columns: String, _ decode: (SQLiteRow, RelativePath) -> Found?
    ) throws(SQLiteError) -> [RelativePath: Found] {
        guard !paths.isEmpty else { return [:] }
        let libraryID = libraryID
        return try database.withDatabase { db throws(SQLiteError) in
            try db.readTransaction { () throws(SQLiteError) in
                let statement = try db.cachedStatement("SELECT \(columns) FROM scan_cache WHERE library_id = ? AND path = ?")
                try statement.bind(libraryID, at: 1)
                var found: [RelativePath: Found] = [:]
                found.reserveCapacity(paths.count)
                for path in paths {
                    try statement.bind(path.string, at: 2)
                    defer { statement.reset() }
                    if let row = try statement.step(), let value = decode(row, path) { found[path] = value }
                }
                return found
            }
        }
    }

    /// Every usable entry of this library, keyed by path, in one query. The
    /// caller compares `entry.stamp` with what it sees on disk.
    public func loadAll() throws(SQLiteError) -> [RelativePath: IndexedFile] {
        let libraryID = libraryID
        return try database.withDatabase { db throws(SQLiteError) in
            var entries = [RelativePath: IndexedFile]()
            try db.cachedStatement("SELECT path, size, mtime_ns, inode, manifest, content_identifier, ctime_ns FROM scan_cache WHERE library_id = ?")
                .forEachRow([.integer(libraryID)]) { row throws(SQLiteError) in
                    guard let path = row.relativePath(at: 0), let entry = Self.entry(row, path: path, firstColumn: 1) else { return }
                    entries[path] = entry
                }
            return entries
        }
    }

    /// Every usable entry of this library, one at a time, in ascending order of
    /// path bytes (SQLite's BINARY collation is `memcmp`, the order of
    /// `RelativePath`): a caller merges them with its own sorted paths.
    public func forEachEntry(_ body: (IndexedFile) -> Void) throws(SQLiteError) {
        let libraryID = libraryID
        try database.withDatabase { db throws(SQLiteError) in
            try db.cachedStatement("""
                SELECT path, size, mtime_ns, inode, manifest, content_identifier, ctime_ns
                FROM scan_cache WHERE library_id = ? ORDER BY path
                """)
                .forEachRow([.integer(libraryID)]) { row throws(SQLiteError) in
                    guard let path = row.relativePath(at: 0), let entry = Self.entry(row, path: path, firstColumn: 1) else { return }
                    body(entry)
                }
        }
    }

    /// Removes the entries of `paths` (files a scan no longer saw).
    @discardableResult
    public func removeEntries(_ paths: [RelativePath]) throws(SQLiteError) -> Int {
        guard !paths.isEmpty else { return 0 }
        let libraryID = libraryID
        return try database.write { db throws(SQLiteError) in
            let delete = try db.cachedStatement("DELETE FROM scan_cache WHERE library_id = ? AND path = ?")
            for path in paths {
                try delete.execute([.integer(libraryID), .text(path.string)])
            }
            return paths.count
        }
    }

    /// Paths with an entry (usable or not) that are not in `sortedPaths`,
    /// which must be in ascending byte order: one streamed query, no set.
    public func paths(notIn sortedPaths: [RelativePath]) throws(SQLiteError) -> [RelativePath] {
        let libraryID = libraryID
        return try database.withDatabase { db throws(SQLiteError) in
            var stale: [RelativePath] = []
            var cursor = sortedPaths.startIndex
            try db.cachedStatement("SELECT path FROM scan_cache WHERE library_id = ? ORDER BY path")
                .forEachRow([.integer(libraryID)]) { row in
                    guard let path = row.relativePath(at: 0) else { return }
                    while cursor < sortedPaths.endIndex, sortedPaths[cursor] < path { cursor += 1 }
                    if cursor == sortedPaths.endIndex || sortedPaths[cursor] != path { stale.append(path) }
                }
            return stale
        }
    }

    /// Stores (or replaces) the entry for `manifest.path`.
    public func store(_ manifest: FileManifest, inode: UInt64) throws(SQLiteError) {
        try storeAll([IndexedFile(manifest: manifest, inode: inode)])
    }

    /// Stores (or replaces) many entries in one transaction.
    public func storeAll(_ files: some Sequence<IndexedFile>) throws(SQLiteError) {
        var files = files.makeIterator()
        guard let first = files.next() else { return }
        let libraryID = libraryID
        try database.write { db throws(SQLiteError) in
            let upsert = try db.cachedStatement("""
                INSERT INTO scan_cache (library_id, path, size, mtime_ns, inode, manifest, content_identifier, ctime_ns,
                                        chunk_list_unverified)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0)
                ON CONFLICT (library_id, path) DO UPDATE SET
                    size = excluded.size, mtime_ns = excluded.mtime_ns,
                    inode = excluded.inode, manifest = excluded.manifest,
                    content_identifier = excluded.content_identifier, ctime_ns = excluded.ctime_ns,
                    chunk_list_unverified = excluded.chunk_list_unverified
                """)
            var next: IndexedFile? = first
            while let file = next {
                next = files.next()
                try upsert.bind(libraryID, at: 1)
                try upsert.bind(file.manifest.path.string, at: 2)
                try upsert.bind(Int64(bitPattern: file.manifest.size), at: 3)
                try upsert.bind(file.manifest.modificationTimeNs, at: 4)
                try upsert.bind(Int64(bitPattern: file.inode), at: 5)
                try upsert.bind(file.manifest.encoded(), at: 6)
                if let identifier = file.contentIdentifier {
                    try upsert.bind(identifier, at: 7)
                } else {
                    try upsert.bindNull(at: 7)
                }
                if let changeTimeNs = file.changeTimeNs {
                    try upsert.bind(changeTimeNs, at: 8)
                } else {
                    try upsert.bindNull(at: 8)
                }
                try upsert.run()
            }
        }
    }

    public func removeEntry(path: RelativePath) throws(SQLiteError) {
        let libraryID = libraryID
        try database.withDatabase { db throws(SQLiteError) in
            try db.cachedStatement("DELETE FROM scan_cache WHERE library_id = ? AND path = ?")
                .execute([.integer(libraryID), .text(path.string)])
        }
    }

    /// Prunes entries of files the scan no longer saw.
    /// - Returns: how many entries were removed.
    @discardableResult
    public func removeEntries(notIn paths: Set<RelativePath>) throws(SQLiteError) -> Int {
        let libraryID = libraryID
        return try database.write { db throws(SQLiteError) in
            let stale = try db.cachedStatement("SELECT path FROM scan_cache WHERE library_id = ?")
                .rows([.integer(libraryID)]) { $0.relativePath(at: 0) }
                .compactMap { $0 }
                .filter { !paths.contains($0) }
            let delete = try db.cachedStatement("DELETE FROM scan_cache WHERE library_id = ? AND path = ?")
            for path in stale {
                try delete.execute([.integer(libraryID), .text(path.string)])
            }
            return stale.count
        }
    }

    /// An entry from the columns size, mtime_ns, inode, manifest, content_identifier,
    /// ctime_ns starting at `firstColumn`; nil if the row does
    /// not hold together.
    private static func entry(_ row: SQLiteRow, path: RelativePath, firstColumn first: Int32) -> IndexedFile? {
        guard let blob = row.blob(at: first + 3) else { return nil }
        let stamp = FileStamp(size: row.uint64(at: first), modificationTimeNs: row.int64(at: first + 1), inode: row.uint64(at: first + 2))
        guard var entry = decode(blob, path: path, stamp: stamp) else { return nil }
        entry.contentIdentifier = row.text(at: first + 4).flatMap { $0.utf8.count <= MediaMetadataLimits.maxIdentifierBytes ? $0 : nil }
        entry.changeTimeNs = row.isNull(at: first + 5) ? nil : row.int64(at: first + 5)
        return entry
    }

    /// Decodes a stored manifest and checks it describes the row it came from.
    private static func decode(_ blob: [UInt8], path: RelativePath, stamp: FileStamp) -> IndexedFile? {
        guard let manifest = try? FileManifest(encoded: blob),
              manifest.path == path,
              manifest.size == stamp.size,
              manifest.modificationTimeNs == stamp.modificationTimeNs
        else { return nil }
        return IndexedFile(manifest: manifest, inode: stamp.inode)
    }
}

extension ScanCache: ScanMemory {
    public func remember(_ files: [IndexedFile]) throws(SQLiteError) {
        try storeAll(files)
    }

    public func forgetFiles(notInSorted sortedPaths: [RelativePath]) throws(SQLiteError) {
        try removeEntries(paths(notIn: sortedPaths))
    }
}
