import Foundation
import LocalFirstSync
import LFSyncContent
import LFSyncCrypto
import LFSyncStore
import LFSyncSystem
import LFSyncWire

/// What a serving device does for syncs (PROTOCOL.md, "Syncing"): applies the sync
/// requests of devices it accepts pushes from unasked (`LibraryReconciler`), with their
/// deletions as its trust says (`DeviceConfig.TrustedPeer.deletions`), and answers the
/// path state requests of devices allowed to pull — one at a time, each on the library as
/// it is now (its own changes recorded first).
struct ServeSync {
    let sync: LocalSync
    let library: URL
    let index: LibraryIndex
    let exclusions: ScanExclusions
    let ledger: SyncStateStore
    let device: UInt64
    /// The configuration in force (`lfsync trust` changes it while serve runs).
    let config: CurrentConfig
    /// One sync, or one record of this library's changes, at a time (`ServeRunner.Running.gate`).
    let gate: SerialGate
    let retentionDays: Int
    let log: @Sendable (String) -> Void

    func start() async {
        let gate = gate
        let this = self
        await sync.serveSyncRequests { peer, request in
            await gate.run { await this.apply(request, from: peer) }
        }
        await sync.servePathStates { _, request in
            await gate.run { await this.answer(request) }
        }
    }

    private func apply(_ request: WireMessage.SyncRequest, from peer: Peer) async -> WireMessage.SyncReply {
        let trusted = config.value.trusted(peer.deviceID)
        let deletions = trusted?.appliesDeletions(asked: request.flags.contains(.deletions)) ?? false
        let name = trusted?.name ?? peer.name
        let reconciler = LibraryReconciler(library: library, index: index, exclusions: exclusions, ledger: ledger, sync: sync,
                                           device: device, retentionDays: retentionDays)
        let outcome = await reconciler.run(with: peer, .init(deletions: deletions, maxDeletions: request.maxDeletions, peerName: name))
        // What its pushes placed is versioned now (taken, adopted), or this sync did not cover it.
        sync.placementsAwaitingSync.release(from: peer.deviceID)
        let reply = WireMessage.SyncReply(requestID: request.requestID, status: outcome.status, counts: outcome.counts,
                                          reason: outcome.reason.map { WireText.fitted($0, maxBytes: WireMessage.SyncReply.maxReasonBytes) })
        log("sync from \(name): \(PushSync.summary(PushSync.Result(peer: peer, reply: reply)))")
        return reply
    }

    private func answer(_ request: WireMessage.PathStateRequest) async -> WireMessage.PathStateReport {
        let scanner = LibraryScanner(root: library, cache: index.scanCache, chunkIndex: index.chunkIndex, exclusions: exclusions)
        if let scan = try? await scanner.scan() {
            _ = try? await HistoryRecorder(library: library, ledger: ledger, device: device, awaitingSync: sync.placementsAwaitingSync.paths()).record(scan)
        }
        let cache = index.scanCache
        return await PathStateAnswers(library: OffloadedFile.libraryKey(library), ledger: ledger) { paths in
            ((try? cache.entries(paths: paths)) ?? [:]).mapValues(\.manifest)
        }.answer(request)
    }
}

/// The configuration a long-running command holds, replaced when `lfsync trust` changes it.
final class CurrentConfig: Sendable {
    private let state: LFSyncSystem.LockedState<DeviceConfig>

    init(_ config: DeviceConfig) { state = LFSyncSystem.LockedState(config) }

    var value: DeviceConfig {
        get { state.withLock { $0 } }
    }

    func replace(with config: DeviceConfig) { state.withLock { $0 = config } }
}
