import LFSyncContent
import LFSyncCrypto

/// The content-addressed store of one library, as an index: chunk hash →
/// where in the library's existing files those bytes are.
///
/// Photos are never stored twice; a receiver that needs a chunk it already has
/// somewhere (another file, a renamed copy) copies it locally instead of asking
/// the peer. Rows are hints: the reader re-verifies the hash of every chunk it
/// copies, so a stale row costs a wasted read, never wrong data. Stale rows are
/// still pruned — re-`record` a file the scan saw change, `removeFiles(notIn:)`
/// for deleted ones.
public final class ChunkIndex: Sendable {
    private let database: SerializedDatabase
    private let libraryID: Int64

    init(database: SerializedDatabase, libraryID: Int64) {
        self.database = database
        self.libraryID = libraryID
    }

    /// Indexes every chunk of a scanned file, replacing what was indexed for its path.
    public func record(fileManifest manifest: FileManifest, inode: UInt64) throws(SQLiteError) {
        try recordAll([IndexedFile(manifest: manifest, inode: inode)])
    }

    /// Indexes many files in one transaction. Each replaces its path's rows;
    /// call it for new and changed files only — an unchanged file's rows are
    /// already right.
    public func recordAll(_ files: some Sequence<IndexedFile>) throws(SQLiteError) {
        var iterator = files.makeIterator()
        guard let first = iterator.next() else { return }
        let libraryID = libraryID
        try database.write { db throws(SQLiteError) in
            let deleteFile = try db.cachedStatement("DELETE FROM chunk_file WHERE library_id = ? AND path = ?")
            let insertFile = try db.cachedStatement(
                "INSERT INTO chunk_file (library_id, path, size, mtime_ns, inode) VALUES (?, ?, ?, ?, ?)")
            let insertChunk = try db.cachedStatement(
                "INSERT INTO chunk_location (file_id, byte_offset, length, hash) VALUES (?, ?, ?, ?)")
            var next: IndexedFile? = first
            while let file = next {
                next = iterator.next()
                // ON DELETE CASCADE removes the old chunk rows with the file row.
                try deleteFile.execute([.integer(libraryID), .text(file.path.string)])
                let stamp = file.stamp
                try insertFile.execute([
                    .integer(libraryID), .text(file.path.string), .integer(unsigned: stamp.size),
                    .integer(stamp.modificationTimeNs), .integer(unsigned: stamp.inode),
                ])
                let fileID = db.lastInsertRowID
                var offset: UInt64 = 0
                for chunk in file.manifest.chunks {
                    // A zero-length chunk names no bytes (and would repeat the offset key).
                    guard chunk.length > 0 else { continue }
                    try insertChunk.bind(fileID, at: 1)
                    try insertChunk.bind(Int64(bitPattern: offset), at: 2)
                    try insertChunk.bind(Int64(chunk.length), at: 3)
                    try insertChunk.bind(chunk.hash, at: 4)
                    try insertChunk.run()
                    offset &+= UInt64(chunk.length)
                }
            }
        }
    }

    /// Up to `limit` places holding the chunk `hash`, the earliest recorded
    /// first (by file, then offset). Rows that a damaged database made
    /// meaningless are skipped.
    package func locations(of hash: Hash256, limit: Int = 16) throws(SQLiteError) -> [ChunkLocation] {
        try database.withDatabase { db throws(SQLiteError) in try locations(of: hash, limit: limit, in: db) }
    }

    /// The places of every chunk in `hashes` that has any (up to `limit` each),
    /// in one read transaction: a receiver planning an offer asks for every
    /// chunk it lacks.
    package func locations(ofAll hashes: [Hash256], limit: Int = 16) throws(SQLiteError) -> [Hash256: [ChunkLocation]] {
        guard !hashes.isEmpty else { return [:] }
        return try database.withDatabase { db throws(SQLiteError) in
            try db.readTransaction { () throws(SQLiteError) in
                var found: [Hash256: [ChunkLocation]] = [:]
                for hash in hashes where found[hash] == nil {
                    let places = try locations(of: hash, limit: limit, in: db)
                    if !places.isEmpty { found[hash] = places }
                }
                return found
            }
        }
    }

    private func locations(of hash: Hash256, limit: Int, in db: SQLiteDatabase) throws(SQLiteError) -> [ChunkLocation] {
        // CROSS JOIN fixes the loop order: SQLite always makes its left
        // table the outer loop. Without it, and without ANALYZE statistics,
        // the planner prefers walking every file of the library over the hash
        // index — 30 ms per lookup at 100k files instead of microseconds.
        // The order is the hash index's own (it ends in the primary key,
        // file then offset): ordering by path took a temporary B-tree for
        // every lookup, set up even when nothing matched — one lookup per
        // file a receiver plans — and sorted every copy of a chunk shared by
        // thousands of files to return the first 16.
        try db.cachedStatement("""
            SELECT f.path, l.byte_offset, l.length, f.size, f.mtime_ns, f.inode
            FROM chunk_location AS l CROSS JOIN chunk_file AS f ON f.id = l.file_id
            WHERE l.hash = ? AND f.library_id = ?
            ORDER BY l.file_id, l.byte_offset
            LIMIT ?
            """)
            .rows([.blob(hash.bytes), .integer(libraryID), .integer(Int64(max(0, limit)))]) { row -> ChunkLocation? in
                guard let path = row.relativePath(at: 0),
                      let length = UInt32(exactly: row.int64(at: 2)), length > 0
                else { return nil }
                return ChunkLocation(
                    path: path, offset: row.uint64(at: 1), length: length,
                    stamp: FileStamp(size: row.uint64(at: 3), modificationTimeNs: row.int64(at: 4), inode: row.uint64(at: 5)))
            }
            .compactMap { $0 }
    }

    /// The stamp each indexed file had when it was recorded, keyed by path:
    /// lets the scanner see which files need re-recording.
    package func indexedFiles() throws(SQLiteError) -> [RelativePath: FileStamp] {
        let libraryID = libraryID
        return try database.withDatabase { db throws(SQLiteError) in
            var files = [RelativePath: FileStamp]()
            try db.cachedStatement("SELECT path, size, mtime_ns, inode FROM chunk_file WHERE library_id = ?")
                .forEachRow([.integer(libraryID)]) { row in
                    guard let path = row.relativePath(at: 0) else { return }
                    files[path] = FileStamp(size: row.uint64(at: 1), modificationTimeNs: row.int64(at: 2), inode: row.uint64(at: 3))
                }
            return files
        }
    }

    /// Forgets a file and all its chunks.
    public func removeFile(path: RelativePath) throws(SQLiteError) {
        let libraryID = libraryID
        try database.write { db throws(SQLiteError) in
            try db.cachedStatement("DELETE FROM chunk_file WHERE library_id = ? AND path = ?")
                .execute([.integer(libraryID), .text(path.string)])
        }
    }

    /// Forgets every file not in `sortedPaths` (ascending byte order): one
    /// streamed query merged with the list, no set of the whole library.
    /// - Returns: how many files were removed.
    @discardableResult
    public func removeFiles(notInSorted sortedPaths: [RelativePath]) throws(SQLiteError) -> Int {
        let libraryID = libraryID
        return try database.write { db throws(SQLiteError) in
            var stale: [RelativePath] = []
            var cursor = sortedPaths.startIndex
            try db.cachedStatement("SELECT path FROM chunk_file WHERE library_id = ? ORDER BY path")
                .forEachRow([.integer(libraryID)]) { row in
                    guard let path = row.relativePath(at: 0) else { return }
                    while cursor < sortedPaths.endIndex, sortedPaths[cursor] < path { cursor += 1 }
                    if cursor == sortedPaths.endIndex || sortedPaths[cursor] != path { stale.append(path) }
                }
            let delete = try db.cachedStatement("DELETE FROM chunk_file WHERE library_id = ? AND path = ?")
            for path in stale {
                try delete.execute([.integer(libraryID), .text(path.string)])
            }
            return stale.count
        }
    }

    /// Forgets every file the scan no longer saw.
    /// - Returns: how many files were removed.
    @discardableResult
    public func removeFiles(notIn paths: Set<RelativePath>) throws(SQLiteError) -> Int {
        let libraryID = libraryID
        return try database.write { db throws(SQLiteError) in
            let stale = try db.cachedStatement("SELECT path FROM chunk_file WHERE library_id = ?")
                .rows([.integer(libraryID)]) { $0.relativePath(at: 0) }
                .compactMap { $0 }
                .filter { !paths.contains($0) }
            let delete = try db.cachedStatement("DELETE FROM chunk_file WHERE library_id = ? AND path = ?")
            for path in stale {
                try delete.execute([.integer(libraryID), .text(path.string)])
            }
            return stale.count
        }
    }
}

extension ChunkIndex: ScanObserver {
    public func didHash(_ files: [IndexedFile]) throws(SQLiteError) {
        try recordAll(files)
    }

    public func didFinishScan(found sortedPaths: [RelativePath]) throws(SQLiteError) {
        try removeFiles(notInSorted: sortedPaths)
    }
}
