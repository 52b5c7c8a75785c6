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
}
