import Dispatch

/// Finishes (verifies) received contents and installs assets for one
/// receiving session, one job at a time, on a thread of its own.
///
/// Both block on the disk: verifying may read a file back, installing fsyncs
/// each file before renaming it into place. Done on the session's actor, those
/// waits stopped the whole connection at every file boundary — no chunk was
/// taken from the socket until the disk caught up. Here the session hands the
/// work over and goes on receiving; the outcome comes back to it as an
/// `await`. The blocking runs on a Dispatch queue, never on the cooperative
/// pool that the session and its read-ahead share. Jobs run in the order they
/// were queued: an install that copies a staged content always runs before
/// the one that takes it.
final class AssetInstallQueue: Sendable {
    private let queue = DispatchQueue(label: "lfsync.asset-install")

    func finish(_ file: HandedOver<IncomingFile>) async -> Result<StagedFile, ReceiveError> {
        await withCheckedContinuation { continuation in
            queue.async {
                continuation.resume(returning: Result { () throws(ReceiveError) in try file.value.finish() })
            }
        }
    }

    func install(_ order: IncomingOffers.InstallOrder, staged: [Hash256: StagedFile], with importer: LibraryImporter) async -> Result<[InstalledFile], ReceiveError> {
        await withCheckedContinuation { continuation in
            queue.async {
                continuation.resume(returning: Result { () throws(ReceiveError) in
                    try importer.install(order, staged: staged)
                })
            }
        }
    }
}
