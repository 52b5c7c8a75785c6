import Foundation

/// The Store layer's database file (`<state>/lfsync.sqlite`): opens it, brings
/// its schema up to date and hands out the stores, which all share its one
/// connection (see `SerializedDatabase` for why one connection and a lock).
///
/// Every method is synchronous and thread-safe; errors are `SQLiteError`.
public final class StateDatabase: Sendable {
    let database: SerializedDatabase

    /// The ledger of what each peer has.
    public let syncState: SyncStateStore

    private init(_ location: SQLiteDatabase.Location, busyTimeout: Duration, durability: SQLiteDatabase.Durability = .full) throws(SQLiteError) {
        let connection = try SQLiteDatabase(location, busyTimeout: busyTimeout, durability: durability)
        try StateSchema.migrations.apply(to: connection)
        database = SerializedDatabase(connection)
        syncState = SyncStateStore(database: database)
    }

    /// Opens (creating it and its directories if needed) and migrates the
    /// database at `url`. New directories are private to the user (0700): the
    /// file lists the names of their photos.
    ///
    /// - Parameter busyTimeout: how long to wait for another process holding the write lock.
    public static func onDisk(_ url: URL, busyTimeout: Duration = .seconds(5)) throws(SQLiteError) -> StateDatabase {
        try onDisk(url, busyTimeout: busyTimeout, durability: .full)
    }

    static func onDisk(_ url: URL, busyTimeout: Duration = .seconds(5), durability: SQLiteDatabase.Durability) throws(SQLiteError) -> StateDatabase {
        let directory = url.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw .cannotOpen(message: "cannot create \(directory.path): \(error)")
        }
        return try StateDatabase(.file(path: url.path), busyTimeout: busyTimeout, durability: durability)
    }

    /// A private, empty, migrated database in memory.
    public static func inMemory() throws(SQLiteError) -> StateDatabase {
        try StateDatabase(.memory, busyTimeout: .zero)
    }

    /// The scan cache of the library at `root`.
    ///
    /// - Parameter root: the library's canonical absolute path; it is only a key,
    ///   so pass it the same way every time (resolved, no trailing slash).
    public func scanCache(forLibrary root: String) throws(SQLiteError) -> ScanCache {
        ScanCache(database: database, libraryID: try libraryID(root))
    }

    /// The chunk index of the library at `root` (same key as `scanCache(forLibrary:)`).
    public func chunkIndex(forLibrary root: String) throws(SQLiteError) -> ChunkIndex {
        ChunkIndex(database: database, libraryID: try libraryID(root))
    }

    /// The scan cache and chunk index of the library at `root`, as a pair.
    public func libraryIndex(forLibrary root: String) throws(SQLiteError) -> LibraryIndex {
        try LibraryIndex(database: self, libraryKey: root)
    }

    /// Closes the connection shared by every store from this database; their
    /// later calls throw `.closed`. Dropping the last reference closes it too.
    public func close() {
        database.close()
    }

    private func libraryID(_ root: String) throws(SQLiteError) -> Int64 {
        try database.write { db throws(SQLiteError) in
            try db.cachedStatement("INSERT INTO library (root) VALUES (?) ON CONFLICT (root) DO NOTHING")
                .execute([.text(root)])
            guard let id = try db.cachedStatement("SELECT id FROM library WHERE root = ?")
                .firstRow([.text(root)], { $0.int64(at: 0) })
            else { throw .corrupt(message: "library row for \(root) vanished") }
            return id
        }
    }
}
