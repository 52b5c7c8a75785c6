import LFSyncContent
import LFSyncSystem

/// A library being sent while it is scanned (`LocalSync.push(library:)`).
public struct LibraryPush: Sendable {
    /// Per-peer progress and outcome, as for any send.
    public let transfer: OutgoingTransfer
    let scan: Eventual<Result<LibraryScan, LibraryScanner.Failure>>
    let push: OutgoingPush

    /// The scan's outcome once it has finished: skipped files and statistics
    /// (its assets went out with the push, so `assets` is empty). A scan that
    /// fails part-way also fails the transfer of what it never reached.
    public func scanned() async throws(LibraryScanner.Failure) -> LibraryScan {
        try await scan.wait().get()
    }

    /// Distinct contents the push carried, offered or not: final once `scanned()` has returned.
    public var contentCount: Int { push.contentCount }

    /// Those contents, for a ledger that must hear about them (a peer that could not be reached).
    public var contentIDs: [ContentID] { push.contentIDs }
}

/// The segments of a streaming scan, put back together: what a sync after the push records.
final class WholeScan: Sendable {
    private let state = LockedState<(assets: [Asset], settled: [RelativePath: FileStatus])>(([], [:]))

    func add(_ segment: ScanSegment) {
        state.withLock { kept in
            kept.assets += segment.assets
            for path in segment.settled.paths { kept.settled[path] = segment.settled[path] }
        }
    }

    func result() -> (assets: [Asset], settled: SettledFiles) {
        state.withLock { ($0.assets.sorted { $0.primaryPath < $1.primaryPath }, SettledFiles($0.settled)) }
    }
}
