import Foundation
import LFSyncContent
import LFSyncCrypto

/// The per-(content, peer) ledger: "synced with the NAS" and "synced with the
/// laptop" are independent facts, one row each.
///
/// Every write names one peer and touches only that peer's rows, so a failure
/// towards one device can never mark content failed (or synced) for another.
/// The store records what it is told, last write wins; deciding *when* a row
/// may become `synced` (after the peer's receipt) is the engine's job.
///
/// Durable: rows live in the WAL-mode, `synchronous=FULL` state database, so a
/// committed `record` survives a crash or power loss.
///
/// Rows from a damaged or hostile database are never trusted into a trap: a
/// state text this build does not know, or a content ID that is not 32 bytes,
/// reads as "no record" (the content is offered again and the row rewritten)
/// and is left out of counts and listings.
public final class SyncStateStore: Sendable {
    /// One ledger row.
    public struct Entry: Hashable, Sendable {
        public var content: ContentID
        package var peer: PeerKey
        public var state: SyncState
        public var reason: String?
        /// The content's size in bytes, when the recorder knew it.
        public var bytes: UInt64?
        /// When the row last changed (millisecond precision).
        public var updatedAt: Date
    }

    /// Longer reasons (which may come from a peer's error message) are cut.
    public static let maxReasonLength = 1000

    let database: SerializedDatabase
    private let changes: LedgerChangeQueue
    private let writer = LedgerWriter()
    /// This process's run, which owns the rows it marks in flight (`LedgerRun`).
    private let runs = LedgerRuns()

    /// Frees what the ledger keeps only to be faster: the page cache its connection is
    /// not using, and the rows it remembers as synced (refilled one row at a time by
    /// the next changes). For a process that stays running after a big push (`watch`):
    /// a catch-up of 200,000 files left 20 MiB of remembered rows behind.
    public func releaseMemory() {
        writer.forgetAll()
        database.releaseMemory()
    }

    init(database: SerializedDatabase) {
        self.database = database
        changes = LedgerChangeQueue(database: database, writer: writer, runs: runs)
    }

    /// Opens the ledger in the state database at `url` (creating directories
    /// and file, migrating). The scan cache and chunk index of the same file
    /// are reachable through `StateDatabase.onDisk` instead.
    public static func onDisk(_ url: URL) throws(SQLiteError) -> SyncStateStore {
        try StateDatabase.onDisk(url).syncState
    }

    /// An empty ledger in memory.
    public static func inMemory() throws(SQLiteError) -> SyncStateStore {
        try StateDatabase.inMemory().syncState
    }

    /// Closes the underlying database (shared with the stores of the same
    /// `StateDatabase`); later calls throw `.closed`.
    public func close() {
        database.close()
    }

    // MARK: Off the cooperative pool

    /// Runs `body` with this store on the database's own thread, after every
    /// call queued there before it, and waits for it without holding a thread
    /// of Swift's cooperative pool (a commit waits for an fsync). Reached through
    /// `read`, `write` and `barrier()`, which say what the work is.
    func onDatabaseThread<Value: Sendable>(
        _ body: @escaping @Sendable (SyncStateStore) throws(SQLiteError) -> Value
    ) async throws(SQLiteError) -> Value {
        changes.seal()
        return try await database.thread.run { () throws(SQLiteError) -> Value in try body(self) }
    }

    /// Queues `change` for the database's own thread and returns at once: for
    /// bookkeeping whose failure the caller would ignore anyway (`in flight`,
    /// `pending`, a burst of receipts). Changes queued while the thread is busy
    /// share one commit (`LedgerChangeQueue`), in order with every other call
    /// through the thread.
    package func enqueue(_ change: LedgerChange) {
        changes.enqueue(change)
    }

    // MARK: Reading one row

    /// `nil` when this content was never recorded for this peer.
    package func state(of content: ContentID, for peer: PeerKey) throws(SQLiteError) -> SyncState? {
        try entry(of: content, for: peer)?.state
    }

    /// Why the last attempt failed, while the row is `failed`.
    package func failureReason(of content: ContentID, for peer: PeerKey) throws(SQLiteError) -> String? {
        guard let entry = try entry(of: content, for: peer), entry.state == .failed else { return nil }
        return entry.reason
    }

    /// The row, with an `inFlight` row whose run is gone read as `interrupted`.
    package func entry(of content: ContentID, for peer: PeerKey) throws(SQLiteError) -> Entry? {
        try database.withDatabase { db throws(SQLiteError) in
            let live = try LedgerRuns.live(in: db)
            return try db.cachedStatement("""
                SELECT state, run, reason, bytes, updated_at_ms FROM sync_state WHERE peer = ? AND content_id = ?
                """)
                .firstRow([.text(peer.rawValue), .blob(content.hash.bytes)]) { row in
                    Self.entry(in: row, at: 0, content: content, peer: peer, live: live)
                } ?? nil
        }
    }

    /// The entry of a row whose columns from `column` on are `state, run, reason, bytes,
    /// updated_at_ms`; nil when its state is none (see `state(in:at:live:)`).
    static func entry(in row: SQLiteRow, at column: Int32, content: ContentID, peer: PeerKey, live: Set<Int64>) -> Entry? {
        guard let state = state(in: row, at: column, live: live) else { return nil }
        return Entry(
            content: content, peer: peer, state: state, reason: row.text(at: column + 2),
            bytes: row.optionalInt64(at: column + 3).map { UInt64(bitPattern: $0) },
            updatedAt: date(milliseconds: row.int64(at: column + 4)))
    }

    /// The state of each of `contents` that has a row with `peer`, in one read: what a
    /// listing of a library's assets asks (one query, not one per asset).
    package func states(of contents: [ContentID], for peer: PeerKey) throws(SQLiteError) -> [ContentID: SyncState] {
        let wanted = Set(contents)
        guard !wanted.isEmpty else { return [:] }
        return try database.withDatabase { db throws(SQLiteError) in
            let live = try LedgerRuns.live(in: db)
            var states: [ContentID: SyncState] = [:]
            try db.cachedStatement("SELECT content_id, state, run FROM sync_state WHERE peer = ?")
                .forEachRow([.text(peer.rawValue)]) { row in
                    guard let content = Self.contentID(in: row), wanted.contains(content),
                          let state = Self.state(in: row, at: 1, live: live) else { return }
                    states[content] = state
                }
            return states
        }
    }

    /// The state of a row (columns `state` at `column` and `run` after it): an `inFlight`
    /// row whose run is not among `live` has nobody working on it, and reads `interrupted`.
    /// Unknown text (a damaged database), or a stored `interrupted`, is no state at all.
    static func state(in row: SQLiteRow, at column: Int32 = 0, live: Set<Int64>) -> SyncState? {
        guard let state = row.text(at: column).flatMap(SyncState.init(rawValue:)), state != .interrupted else { return nil }
        guard state == .inFlight else { return state }
        let run = row.optionalInt64(at: column + 1)
        return run.map(live.contains) == true ? .inFlight : .interrupted
    }

    // MARK: Writing

    /// Records `state` for every content in `contents` towards `peer`, in one
    /// transaction: all rows change or none do.
    ///
    /// - Parameters:
    ///   - reason: why (for `.failed`); replaces the previous reason, so
    ///     recording `.synced` clears it. Cut to `maxReasonLength` characters.
    ///   - bytes: the content's size, stored on every row written; `nil` keeps
    ///     a size recorded earlier.
    ///   - unlessSynced: leave rows that say `synced` as they are. What a sender
    ///     learns from an attempt that did not get through (declined, refused,
    ///     unreachable, cut off, a failed receipt for one more copy) says nothing
    ///     against content the peer verified and stored before.
    ///   - date: the time of the change.
    package func record(
        _ state: SyncState, for contents: [ContentID], peer: PeerKey,
        reason: String? = nil, bytes: UInt64? = nil, unlessSynced: Bool = false, at date: Date = Date()
    ) throws(SQLiteError) {
        precondition(state != .interrupted, "interrupted is how a row in flight of a run that is gone reads; it is never written")
        guard !contents.isEmpty else { return }
        let change = LedgerChange.record(state, contents: contents, peer: peer, reason: reason, bytes: bytes, keep: unlessSynced ? .synced : .nothing, at: date)
        try write(change)
    }

    /// Marks many contents `synced` with `peer` in one transaction, each with
    /// its own byte count: a burst of receipts costs one commit (one fsync),
    /// not one per asset.
    ///
    /// A row that already says `synced` with the same size is left as it is
    /// (a repeat push confirms every content again: see `LedgerChange`).
    package func recordSynced(_ entries: [(content: ContentID, bytes: UInt64)], peer: PeerKey, at date: Date = Date()) throws(SQLiteError) {
        guard !entries.isEmpty else { return }
        let change = LedgerChange.synced(entries, peer: peer, at: date)
        try write(change)
    }

    /// Moves every row of each old content ID to its new one, for every peer, in one
    /// transaction: what the change of content hashes needs (`LibraryHashUpgrade`), where
    /// the same content was named by another hash. A peer that already has a row under
    /// the new ID keeps it (it was written later); the old row goes either way.
    /// - Returns: how many rows now stand under a new ID.
    @discardableResult
    public func carryOver(_ renames: [(from: ContentID, to: ContentID)]) throws(SQLiteError) -> Int {
        guard !renames.isEmpty else { return 0 }
        defer { writer.forgetAll() }
        return try database.write { db throws(SQLiteError) in
            // A join through a table of the renames: sync_state is keyed peer first, so one
            // lookup per rename would scan the whole ledger each time.
            try db.execute("CREATE TEMP TABLE IF NOT EXISTS content_rename (old BLOB PRIMARY KEY, new BLOB NOT NULL) WITHOUT ROWID")
            try db.execute("DELETE FROM content_rename")
            let insert = try db.prepare("INSERT OR IGNORE INTO content_rename (old, new) VALUES (?, ?)")
            for rename in renames where rename.from != rename.to {
                try insert.bind(rename.from.hash, at: 1)
                try insert.bind(rename.to.hash, at: 2)
                try insert.run()
            }
            let before = try db.cachedStatement("SELECT count(*) FROM sync_state").firstRow([]) { $0.int64(at: 0) } ?? 0
            try db.execute("""
                INSERT OR IGNORE INTO sync_state (peer, content_id, state, reason, bytes, updated_at_ms)
                SELECT s.peer, r.new, s.state, s.reason, s.bytes, s.updated_at_ms
                FROM sync_state AS s JOIN content_rename AS r ON s.content_id = r.old
                """)
            let added = (try db.cachedStatement("SELECT count(*) FROM sync_state").firstRow([]) { $0.int64(at: 0) } ?? 0) - before
            try db.execute("DELETE FROM sync_state WHERE content_id IN (SELECT old FROM content_rename)")
            try db.execute("DROP TABLE content_rename")
            return Int(added)
        }
    }

    // MARK: Reading many rows

    /// The candidates that are not `synced` with `peer`, in their given order
    /// (duplicates kept).
    ///
    /// Loads the peer's synced set once — one indexed range scan of the
    /// `(peer, content_id)` key — and filters in memory, so 100k candidates
    /// cost one query instead of 100k.
    package func contentIDs(notSyncedWith peer: PeerKey, from candidates: [ContentID]) throws(SQLiteError) -> [ContentID] {
        guard !candidates.isEmpty else { return [] }
        let synced = try contentIDSet(in: .synced, for: peer)
        return candidates.filter { !synced.contains($0) }
    }

    /// Every content in `state` with `peer`, in content ID order (`inFlight` and
    /// `interrupted` as `entry(of:for:)` tells them apart).
    package func contentIDs(in state: SyncState, for peer: PeerKey) throws(SQLiteError) -> [ContentID] {
        let stored: SyncState = state == .interrupted ? .inFlight : state
        return try database.withDatabase { db throws(SQLiteError) in
            let live = try LedgerRuns.live(in: db)
            return try db.cachedStatement("SELECT content_id, state, run FROM sync_state WHERE peer = ? AND state = ? ORDER BY content_id")
                .rows([.text(peer.rawValue), .text(stored.rawValue)]) { row in
                    Self.state(in: row, at: 1, live: live) == state ? Self.contentID(in: row) : nil
                }
                .compactMap { $0 }
        }
    }

    /// How many contents are in each state with `peer`; every state is present
    /// (0 when none). Rows with unknown state text are not counted.
    /// Per state: how many assets and how many bytes (as recorded) for `peer`; every state present.
    package func totals(for peer: PeerKey) throws(SQLiteError) -> [SyncState: (count: Int, bytes: UInt64)] {
        try database.withDatabase { db throws(SQLiteError) in
            let live = try LedgerRuns.live(in: db)
            var totals = Dictionary(uniqueKeysWithValues: SyncState.allCases.map { ($0, (count: 0, bytes: UInt64(0))) })
            try db.cachedStatement("""
                SELECT state, run, count(*), coalesce(sum(max(bytes, 0)), 0) FROM sync_state WHERE peer = ? GROUP BY state, run
                """)
                .forEachRow([.text(peer.rawValue)]) { row in
                    guard let state = Self.state(in: row, live: live), let current = totals[state] else { return }
                    totals[state] = (current.count + Int(truncatingIfNeeded: row.int64(at: 2)),
                                     current.bytes + UInt64(clamping: row.int64(at: 3)))
                }
            return totals
        }
    }

    package func counts(for peer: PeerKey) throws(SQLiteError) -> [SyncState: Int] {
        try totals(for: peer).mapValues(\.count)
    }

    /// Every peer with at least one row, sorted.
    package func peers() throws(SQLiteError) -> [PeerKey] {
        try database.withDatabase { db throws(SQLiteError) in
            try db.cachedStatement("SELECT DISTINCT peer FROM sync_state ORDER BY peer")
                .rows { $0.text(at: 0).map(PeerKey.init(rawValue:)) }
                .compactMap { $0 }
        }
    }

    // MARK: Helpers

    private func write(_ change: LedgerChange) throws(SQLiteError) {
        let run = change.marksInFlight ? runs.id(registeringIn: database) : nil
        do {
            try database.write { db throws(SQLiteError) in try writer.apply(change, to: db, run: run) }
        } catch {
            writer.forgetAll()
            throw error
        }
    }

    private func contentIDSet(in state: SyncState, for peer: PeerKey) throws(SQLiteError) -> Set<ContentID> {
        try database.withDatabase { db throws(SQLiteError) in
            var set = Set<ContentID>()
            try db.cachedStatement("SELECT content_id FROM sync_state WHERE peer = ? AND state = ?")
                .forEachRow([.text(peer.rawValue), .text(state.rawValue)]) { row in
                    if let content = Self.contentID(in: row) { set.insert(content) }
                }
            return set
        }
    }

    /// Column 0 as a content ID, without copying the blob; `nil` unless it is 32 bytes.
    static func contentID(in row: SQLiteRow, at column: Int32 = 0) -> ContentID? {
        row.withUnsafeBlob(at: column) { bytes in bytes.flatMap(Hash256.init(bytes:)).map(ContentID.init(hash:)) }
    }

    static func milliseconds(_ date: Date) -> Int64 {
        let value = (date.timeIntervalSince1970 * 1000).rounded()
        return Int64(exactly: value) ?? (value > 0 ? .max : 0)
    }

    static func date(milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}
