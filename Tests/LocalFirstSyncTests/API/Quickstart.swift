// The quickstart the library was designed from (issue 33), as an app writes it: this file
// imports LocalFirstSync alone, so that it compiles is the test that the calls exist as
// written. `QuickstartTests` runs the parts that need no person and no network.
import LocalFirstSync

enum Quickstart {
    /// Let the user choose: the first device found nearby, connected.
    static func chooseNearby(_ sync: LocalSync) async throws -> Peer? {
        for await event in sync.nearbyPeers() {
            if case let .found(found) = event { return try await sync.connect(to: found) }
        }
        return nil
    }

    static func send(_ asset: Asset, with sync: LocalSync, to ipad: Peer, and mac: Peer) async throws -> [PeerTransferSummary] {
        let transfer = try await sync.send(asset, to: [ipad, mac])
        for await update in transfer { _ = (update.peer, update.progress.fractionCompleted) }
        let summary = try await sync.send(asset, to: .allConnectedPeers).waitUntilCompleted()
        try await transfer.cancel()
        return summary
    }

    static func answerRequests(of sync: LocalSync) async throws {
        for await request in sync.connectionRequests() { try await request.accept() }  // or decline()
    }

    static func receive(with sync: LocalSync) async throws -> [ContentID: ReceiveSessionHandle.Outcome] {
        for await incoming in sync.incomingTransfers() {
            _ = (incoming.from, incoming.items, incoming.totalByteCount)
            let session = try await incoming.accept()
            let files = try await session.files()
            return files
        }
        return [:]
    }

    static func pending(in store: SyncStateStore, for ipad: Peer, of libraryAssetIDs: [ContentID]) async throws -> [ContentID] {
        let pending = try await store.contentIDs(notSyncedWith: ipad.syncIdentity, from: libraryAssetIDs)
        return pending
    }
}
