import Dispatch

/// Finishes (verifies) received contents and installs assets for one
/// receiving session, one job at a time, on a thread of its own.
///
/// Both block on the disk: verifying may read a file back, installing fsyncs
/// each file before renaming it into place. Done on the session's actor, those
/// waits stopped the whole connection at every file boundary — no chunk was
/// taken from the socket until the disk caught up. Here the session hands the
/// work over and goes on receiving; the outcome comes back through `done`.
/// The blocking runs on a Dispatch queue, never on the cooperative pool that
/// the session and its read-ahead share.
///
/// Jobs run in exactly the order they were queued — `finish` and `install`
/// enqueue synchronously, so the caller's order is the queue's: an install
/// that copies a staged content always runs before the one that takes it.
final class AssetInstallQueue: Sendable {
    private let queue = DispatchQueue(label: "lfsync.asset-install")

    func finish(_ file: HandedOver<IncomingFile>, done: @escaping @Sendable (Result<StagedFile, ReceiveError>) -> Void) {
        queue.async {
            done(Result { () throws(ReceiveError) in try file.value.finish() })
        }
    }

    func install(
        _ order: IncomingOffers.InstallOrder, staged: [Hash256: StagedFile], with importer: LibraryImporter,
        done: @escaping @Sendable (Result<[InstalledFile], ReceiveError>) -> Void
    ) {
        queue.async {
            done(Result { () throws(ReceiveError) in try importer.install(order, staged: staged) })
        }
    }
}
