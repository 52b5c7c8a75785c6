#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Synchronization

/// Finishes (verifies) received contents and installs assets for one
/// receiving session, on a thread of its own.
///
/// Both block on the disk: verifying may read a file back, installing makes
/// each file durable before it is renamed into place. Done on the session's
/// actor, those waits stopped the whole connection at every file boundary.
/// Here the session hands the work over and goes on receiving; the outcome
/// comes back through each job's `done`. The blocking runs on a Dispatch
/// queue, never on the cooperative pool that the session and its read-ahead
/// share.
///
/// Installs are landed in groups, with one pair of durability barriers per
/// group (`LibraryImporter.install`): a folder of small files costs two disk
/// flushes per group, not two per file. A group is what piled up while the
/// last one was landing, or — when only a few are waiting — what arrives
/// within `gatherWindow`, a few milliseconds against a disk flush each.
/// Finishing needs no barrier and is done first. Installs keep the order they
/// were queued in — `finish` and `install` take them synchronously — so one
/// that copies a staged content always runs before the one that takes it;
/// and an install is only ever queued after the finishes it needs have run.
final class AssetInstallQueue: Sendable {
    typealias FinishDone = @Sendable (Result<StagedFile, ReceiveError>) -> Void
    typealias InstallDone = @Sendable (Result<[InstalledFile], ReceiveError>) -> Void

    private enum Job {
        case finish(HandedOver<IncomingFile>, FinishDone)
        case install(IncomingOffers.InstallOrder, [Hash256: StagedFile], LibraryImporter, InstallDone)
    }

    private struct Pending: @unchecked Sendable {
        var jobs: [Job] = []
        var draining = false
    }

    /// Installs landed under one pair of barriers at most.
    static let maxGroup = 512
    /// With fewer installs than this waiting, wait up to `gatherWindow` for more.
    static let smallGroup = 64
    static let gatherWindow: Duration = .milliseconds(4)

    private let queue = DispatchQueue(label: "lfsync.asset-install")
    private let pending = Mutex(Pending())

    func finish(_ file: HandedOver<IncomingFile>, done: @escaping FinishDone) {
        enqueue(.finish(file, done))
    }

    func install(
        _ order: IncomingOffers.InstallOrder, staged: [Hash256: StagedFile], with importer: LibraryImporter,
        done: @escaping InstallDone
    ) {
        enqueue(.install(order, staged, importer, done))
    }

    private func enqueue(_ job: Job) {
        let start = pending.withLock { pending -> Bool in
            pending.jobs.append(job)
            defer { pending.draining = true }
            return !pending.draining
        }
        if start { queue.async { self.drain() } }
    }

    /// Runs every job queued until none is left: finishes as they come,
    /// installs gathered into groups.
    private func drain() {
        var installs: [(order: IncomingOffers.InstallOrder, staged: [Hash256: StagedFile], importer: LibraryImporter, done: InstallDone)] = []
        var gathering = ContinuousClock.now
        while true {
            let jobs = pending.withLock { pending -> [Job] in
                defer { pending.jobs = [] }
                if pending.jobs.isEmpty, installs.isEmpty { pending.draining = false }
                return pending.jobs
            }
            if jobs.isEmpty, installs.isEmpty { return }
            if installs.isEmpty { gathering = .now }
            for job in jobs {
                switch job {
                case let .finish(file, done):
                    done(Result { () throws(ReceiveError) in try file.value.finish() })
                case let .install(order, staged, importer, done):
                    installs.append((order, staged, importer, done))
                }
            }
            // A few installs and little waited yet: more may be on their way.
            if !installs.isEmpty, installs.count < Self.smallGroup, ContinuousClock.now - gathering < Self.gatherWindow {
                usleep(500)
                continue
            }
            while !installs.isEmpty {
                let group = installs.prefix(Self.maxGroup)
                installs.removeFirst(group.count)
                guard let importer = group.first?.importer else { break }
                let results = importer.install(group.map { ($0.order, $0.staged) })
                for (entry, result) in zip(group, results) { entry.done(result) }
            }
        }
    }
}
