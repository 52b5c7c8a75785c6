import LFSyncContent
import LFSyncSystem
import LFSyncCrypto
import LFSyncStore
import LFSyncLanding
import LFSyncTransport
import LFSyncTCP
import LFSyncDiscovery
import LFSyncWire

/// What a peer session needs from the `LocalSync` that owns it, handed over
/// as one value so sessions never reach back into the owner's state.
struct SessionContext: Sendable {
    let currentTrust: CurrentTrust
    /// Read at each decision: a trust change applies to sessions already open.
    var trust: TrustPolicy { currentTrust.policy }
    let decisionTimeout: Duration
    /// Where the session's deadlines (consent, offer replies) are measured.
    let clock: any Clock<Duration>
    let importerProvider: @Sendable () throws(SyncError) -> LibraryImporter
    let announceTransfer: @Sendable (IncomingTransfer) -> Void
    let onReceived: @Sendable ([(content: ContentID, bytes: UInt64)], [(content: ContentID, files: SyncStateStore.Composition)], Peer) async -> Void
    let onPull: @Sendable (Peer, [String]) async throws(SyncError) -> Void
    let onFetch: @Sendable (Peer, [ContentID]) async throws(SyncError) -> Void
    let onHoldingCheck: @Sendable (WireMessage.HoldingCheck, Peer) async -> HoldingResponse
    let onChunkRequest: @Sendable (WireMessage.ChunkRequest, Peer) async -> WireMessage.ChunkReply.Outcome
    let onPathStateRequest: @Sendable (WireMessage.PathStateRequest, Peer) async -> WireMessage.PathStateReport
    let onSyncRequest: @Sendable (WireMessage.SyncRequest, Peer) async -> WireMessage.SyncReply
    /// For a push of this peer a sync follows: which of these paths of the receiving
    /// library its path history knows (left to the sync); the others, where nothing stands
    /// yet, are noted as placed for that sync (`PlacementsAwaitingSync`).
    let leaveToSync: @Sendable (Peer, [RelativePath]) async -> Set<RelativePath>
    let logger: @Sendable (String) -> Void

    func importer() throws(SyncError) -> LibraryImporter { try importerProvider() }
    func announce(_ transfer: IncomingTransfer) { announceTransfer(transfer) }
    /// Records received assets in the ledger, with what each is made of; returns once they
    /// are committed.
    func receivedAssets(_ contents: [(content: ContentID, bytes: UInt64)], madeOf files: [(content: ContentID, files: SyncStateStore.Composition)],
                        from peer: Peer) async {
        await onReceived(contents, files, peer)
    }
    func pullRequested(by peer: Peer, excluding patterns: [String]) async throws(SyncError) { try await onPull(peer, patterns) }
    func fetchRequested(by peer: Peer, contents: [ContentID]) async throws(SyncError) { try await onFetch(peer, contents) }
    /// The answers to a peer's holding check, or why there are none.
    func holdingAnswers(for check: WireMessage.HoldingCheck, from peer: Peer) async -> HoldingResponse {
        await onHoldingCheck(check, peer)
    }
    func chunk(for request: WireMessage.ChunkRequest, from peer: Peer) async -> WireMessage.ChunkReply.Outcome {
        await onChunkRequest(request, peer)
    }
    func pathStates(for request: WireMessage.PathStateRequest, from peer: Peer) async -> WireMessage.PathStateReport {
        await onPathStateRequest(request, peer)
    }
    func sync(_ request: WireMessage.SyncRequest, from peer: Peer) async -> WireMessage.SyncReply {
        await onSyncRequest(request, peer)
    }
    func log(_ line: String) { logger(line) }
}
