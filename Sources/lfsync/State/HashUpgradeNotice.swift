import Foundation
import LocalFirstSync
import LFSyncSystem
import LFSyncCrypto
import LFSyncContent
import LFSyncStore
import LFSyncTransport
import LFSyncTCP
import LFSyncDiscovery
import Synchronization

/// What a person sees while a library is carried over to the new content hashes, once,
/// on the first command that uses it (`LibraryHashUpgrade`): a note before and after, and
/// on a terminal a line redrawn in place with how far it is.
enum HashUpgradeNotice {
    /// The library's index, carried over first if an earlier lfsync indexed it.
    static func upgradedIndex(
        for library: URL, home: StateHome, ledger: SyncStateStore, exclusions: ScanExclusions, console: Console
    ) async throws -> LibraryIndex {
        let index = try home.index(for: library)
        _ = try await upgrade(index, of: library, ledger: ledger, exclusions: exclusions, console: console)
        return index
    }

    /// Carries `index` over if it waits for it, with the notes; nil if it did not wait.
    static func upgrade(
        _ index: LibraryIndex, of library: URL, ledger: SyncStateStore, exclusions: ScanExclusions, console: Console
    ) async throws -> LibraryHashUpgrade.Report? {
        guard try LibraryHashUpgrade.isNeeded(index.scanCache) else { return nil }
        console.note("\(library.path): indexed by an earlier lfsync; indexing it again with the new content hashes (once)")
        let line = LineDrawer(enabled: console.stderrIsTerminal && console.verbosity != .quiet)
        let report: LibraryHashUpgrade.Report?
        do {
            report = try await LibraryHashUpgrade.runIfNeeded(
                library: library, cache: index.scanCache, chunkIndex: index.chunkIndex, ledger: ledger, exclusions: exclusions
            ) { progress in
                switch progress {
                case let .indexing(scan): line.draw("indexing: \(Int(scan.fractionCompleted * 100)) %, \(scan.filesDone) of \(scan.filesTotal) files")
                case let .naming(done, total): line.draw("matching the ledger: \(done) of \(total) files")
                }
            }
        } catch {
            line.finish()
            throw CommandFailure(message: "cannot carry \(library.path) over to the new content hashes: \(error)", exitCode: .ioError)
        }
        line.finish()
        if let report {
            console.note(String(format: "%@: %d files indexed, %d ledger rows carried over to the new content IDs in %.1f s",
                                library.path, report.files, report.rowsCarriedOver, report.seconds))
            for path in report.damaged {
                console.error("\(library.path)/\(path.description): its bytes are not those the earlier lfsync recorded, though its size and modification time are (damaged on disk?)")
            }
        }
        return report
    }

    /// One status line on a terminal, redrawn at most ten times a second.
    private final class LineDrawer: Sendable {
        private let enabled: Bool
        private let last = Mutex<(time: ContinuousClock.Instant?, drawn: Bool)>((nil, false))

        init(enabled: Bool) { self.enabled = enabled }

        func draw(_ text: String) {
            guard enabled else { return }
            let now = ContinuousClock.now
            let due = last.withLock { state -> Bool in
                if let time = state.time, now - time < .milliseconds(100) { return false }
                state = (now, true)
                return true
            }
            if due { Console.writeError("\r\u{1B}[2K" + text) }
        }

        func finish() {
            if last.withLock({ $0.drawn }) { Console.writeError("\r\u{1B}[2K") }
        }
    }
}
