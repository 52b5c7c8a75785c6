import LFSyncContent
import LFSyncCrypto

/// What an app (or the command line) asks the ledger: every call runs on the database's
/// own thread, after the changes queued before it, and never holds a thread of Swift's
/// cooperative pool while SQLite reads. Peers are named by the Device ID their handshake
/// proved (`Peer.syncIdentity`).
extension SyncStateStore {
    /// The candidates that are not `synced` with `peer`, in their given order (duplicates
    /// kept): what to offer it.
    public func contentIDs(notSyncedWith peer: DeviceID, from candidates: [ContentID]) async throws(SQLiteError) -> [ContentID] {
        let key = PeerKey(peer)
        return try await onDatabaseThread { store throws(SQLiteError) in try store.contentIDs(notSyncedWith: key, from: candidates) }
    }

    /// Where `content` stands with `peer`; nil if it was never offered to it.
    public func state(of content: ContentID, with peer: DeviceID) async throws(SQLiteError) -> SyncState? {
        let key = PeerKey(peer)
        return try await onDatabaseThread { store throws(SQLiteError) in try store.state(of: content, for: key) }
    }

    /// The row of `content` with `peer`, with why it failed and when it last changed.
    public func entry(of content: ContentID, with peer: DeviceID) async throws(SQLiteError) -> Entry? {
        let key = PeerKey(peer)
        return try await onDatabaseThread { store throws(SQLiteError) in try store.entry(of: content, for: key) }
    }

    /// The state of each of `contents` that has a row with `peer`, in one read.
    public func states(of contents: [ContentID], with peer: DeviceID) async throws(SQLiteError) -> [ContentID: SyncState] {
        let key = PeerKey(peer)
        return try await onDatabaseThread { store throws(SQLiteError) in try store.states(of: contents, for: key) }
    }

    /// Per state, how many contents and how many bytes `peer` has; every state present.
    public func totals(with peer: DeviceID) async throws(SQLiteError) -> [SyncState: (count: Int, bytes: UInt64)] {
        let key = PeerKey(peer)
        return try await onDatabaseThread { store throws(SQLiteError) in try store.totals(for: key) }
    }

    /// Runs `body` with the store on the database's thread (the shape GRDB's `read` has):
    /// several queries of one report without holding the cooperative pool.
    package func read<Value: Sendable>(_ body: @escaping @Sendable (SyncStateStore) throws(SQLiteError) -> Value) async throws(SQLiteError) -> Value {
        try await onDatabaseThread(body)
    }

    /// Runs `body`, which changes rows, on the database's thread, after every change queued
    /// before it, and returns once it has committed (the shape GRDB's `write` has). For a
    /// change whose caller must know it is durable; bookkeeping goes through `enqueue`,
    /// whose changes share commits.
    package func write<Value: Sendable>(_ body: @escaping @Sendable (SyncStateStore) throws(SQLiteError) -> Value) async throws(SQLiteError) -> Value {
        try await onDatabaseThread(body)
    }

    /// Waits until every change queued before this call is committed: what a push that
    /// reports its end waits for, so the ledger says what its summary says.
    package func barrier() async {
        _ = try? await onDatabaseThread { _ in }
    }
}

extension PeerKey {
    /// The key of a peer's rows: its Device ID's text form.
    package init(_ deviceID: DeviceID) {
        self.init(rawValue: deviceID.description)
    }
}
