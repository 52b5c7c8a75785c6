import Dispatch

/// Finishes and installs a receiving session's completed assets, one at a
/// time, on a thread of its own.
///
/// Finishing blocks: each file is fsynced before it is renamed into place,
/// and the fsync waits for the disk. Done on the session's actor, that wait
/// stopped the whole connection at every file boundary — no chunk was taken
/// from the socket until the disk caught up. Here the session hands the asset
/// over and goes on receiving; the outcome comes back to it as an `await`.
/// The blocking runs on a Dispatch queue, never on the cooperative pool that
/// the session and its read-ahead share.
final class AssetInstallQueue: Sendable {
    private let queue = DispatchQueue(label: "lfsync.asset-install")

    func install(_ asset: FinishingAsset, with importer: LibraryImporter) async -> Result<[InstalledFile], ReceiveError> {
        await withCheckedContinuation { continuation in
            queue.async {
                continuation.resume(returning: Result { () throws(ReceiveError) in
                    try importer.install(asset.asset, files: asset.files)
                })
            }
        }
    }
}

/// A completed asset on its way to installation. `IncomingFile` is not
/// thread-safe: the session hands these files over and never touches them
/// again, so they cross to the install thread unshared.
struct FinishingAsset: @unchecked Sendable {
    let asset: Asset
    let files: [IncomingFile?]
}
