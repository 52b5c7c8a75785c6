/// Where one content stands with one peer.
///
/// The raw values are what the ledger stores: never rename them. A row whose
/// text is none of these (a damaged or hand-edited database) is read as "no
/// record", so the content is simply offered again and the row rewritten.
public enum SyncState: String, Sendable, Codable, CaseIterable {
    /// Known to need sending; not started.
    case pending
    /// Offered or being transferred.
    case inFlight
    /// The peer verified every hash and durably stored the content.
    case synced
    /// The last attempt failed; `SyncStateStore.failureReason` says why.
    case failed
    /// Was in flight in a run that ended before it was confirmed (the sending process
    /// crashed or was killed): nothing is working on it. Never stored; the ledger reads an
    /// `inFlight` row this way once its run is gone (`LedgerRun`).
    case interrupted
}
