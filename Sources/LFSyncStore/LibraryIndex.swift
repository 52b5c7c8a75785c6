import Foundation

/// The scan cache and chunk index of one library, opened together: what the
/// scanner writes and the receiver reads.
///
/// `lfsync` keeps one index file per library (`open(at:)`, e.g.
/// `<state>/libraries/<key>.sqlite`), so scanning never writes into the library
/// itself. Such a file uses the same schema as the state database and holds
/// its one library under a fixed key; `StateDatabase.libraryIndex(forLibrary:)`
/// gives the same pair for a library kept inside a shared database.
public struct LibraryIndex: Sendable {
    public let scanCache: ScanCache
    public let chunkIndex: ChunkIndex
    private let database: StateDatabase

    /// The library key used inside a file that holds a single library.
    package static let soleLibraryKey = ""

    package init(database: StateDatabase, libraryKey: String) throws(SQLiteError) {
        self.database = database
        scanCache = try database.scanCache(forLibrary: libraryKey)
        chunkIndex = try database.chunkIndex(forLibrary: libraryKey)
    }

    /// Opens (creating directories and file, migrating) the index file at `url`.
    /// It only caches what a scan can find again, so a commit need not survive a
    /// power loss (see `SQLiteDatabase.Durability`): one disk flush fewer per commit.
    public static func open(at url: URL) throws(SQLiteError) -> LibraryIndex {
        try LibraryIndex(database: StateDatabase.onDisk(url, durability: .cache), libraryKey: soleLibraryKey)
    }

    /// An empty index in memory.
    public static func inMemory() throws(SQLiteError) -> LibraryIndex {
        try LibraryIndex(database: StateDatabase.inMemory(), libraryKey: soleLibraryKey)
    }

    /// Frees the page cache memory the index holds but is not using, for a process
    /// that stays running between scans (`lfsync watch`).
    public func releaseMemory() {
        database.database.releaseMemory()
    }

    /// Closes the file; later calls on either store throw `.closed`.
    public func close() {
        database.close()
    }
}
