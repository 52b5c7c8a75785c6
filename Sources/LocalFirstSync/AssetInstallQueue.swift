#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Synchronization
import LFSyncCrypto
import LFSyncStore
import LFSyncLanding
import LFSyncSystem

/// Verifies received contents and installs assets for one
/// receiving session, on threads of its own.
///
/// Both block on the disk. Done on the session's actor, those waits stopped
/// the whole connection at every file boundary; here the session hands the
/// work over and goes on receiving, and the outcome comes back through each
/// job's `done`. The blocking runs on Dispatch queues, never on the
/// cooperative pool that the session and its read-ahead share. Verifying has
/// a queue of its own, so a verify never waits behind a disk flush.
///
/// Installs land in groups, through `LibraryImporter`'s three phases, and
/// pipelined so that one durability barrier serves two groups: the sync
/// after group N+1's copies are made is also the one that makes group N's
/// renames durable. In steady state a folder of small files costs one disk
/// flush per group, not two per file. A group is what piled up while the
/// last one was landing, or — when only a few are waiting — what arrives
/// within `gatherWindow`, a few milliseconds against a disk flush each.
/// Installs keep the order they were queued in, so one that copies a staged
/// content always runs before the one that takes it; and an install is only
/// ever queued after the verifications it needs have run.
///
/// A group's last step — entering its files in the chunk index and scan
/// cache, then reporting them — runs on a completion thread, in group order:
/// the install thread goes straight on to rename the next group in rather
/// than waiting for two SQLite transactions between disk flushes.
final class AssetInstallQueue: Sendable {
    typealias VerifyDone = @Sendable (Result<StagedFile, ReceiveError>) -> Void
    typealias InstallDone = @Sendable (Result<[InstalledFile], ReceiveError>) -> Void

    private struct Install: @unchecked Sendable {
        let order: IncomingOffers.InstallOrder
        let staged: [Hash256: StagedFile]
        let importer: LibraryImporter
        let done: InstallDone
    }

    private struct Pending: @unchecked Sendable {
        var installs: [Install] = []
        var draining = false
    }

    /// Installs landed under one barrier at most.
    static let maxGroup = 512
    /// With fewer installs than this waiting, wait up to `gatherWindow` for more.
    static let smallGroup = 64
    static let gatherWindow: Duration = .milliseconds(4)

    private let verifyQueue = DispatchQueue(label: "lfsync.verify")
    private let installQueue = DispatchQueue(label: "lfsync.install")
    private let completionQueue = DispatchQueue(label: "lfsync.install.complete")
    private let pending = LockedState(Pending())

    func verify(_ file: HandedOver<IncomingFile>, done: @escaping VerifyDone) {
        verifyQueue.async {
            done(Result { () throws(ReceiveError) in try file.value.verify() })
        }
    }

    func install(
        _ order: IncomingOffers.InstallOrder, staged: [Hash256: StagedFile], with importer: LibraryImporter,
        done: @escaping InstallDone
    ) {
        let start = pending.withLock { pending -> Bool in
            pending.installs.append(Install(order: order, staged: staged, importer: importer, done: done))
            defer { pending.draining = true }
            return !pending.draining
        }
        if start { installQueue.async { self.drain() } }
    }

    /// A group renamed into place, waiting for the barrier that lets it be reported.
    /// Handed from the install thread to the completion thread, which alone touches it then.
    private struct Landed: @unchecked Sendable {
        let group: LibraryImporter.LandedGroup
        let importer: LibraryImporter
        let done: [InstallDone]

        func complete(after barrier: Result<Void, ReceiveError>) {
            for (done, result) in zip(done, importer.complete(group, after: barrier)) { done(result) }
        }
    }

    /// Records and reports `landed` on the completion thread, after every group landed before it.
    private func complete(_ landed: Landed, after barrier: Result<Void, ReceiveError>) {
        completionQueue.async { landed.complete(after: barrier) }
    }

    /// Lands every install queued until none is left and the last group is durable.
    private func drain() {
        var waiting: [Install] = []
        var landed: Landed?
        var gathering = ContinuousClock.now
        while true {
            let arrived = pending.withLock { pending -> [Install] in
                defer { pending.installs = [] }
                if pending.installs.isEmpty, waiting.isEmpty, landed == nil { pending.draining = false }
                return pending.installs
            }
            if waiting.isEmpty { gathering = .now }
            waiting += arrived
            if waiting.isEmpty {
                // Nothing more to share the barrier with: the last group is made durable on its own.
                guard let last = landed else { return }
                complete(last, after: last.importer.barrier())
                landed = nil
                continue
            }
            // A few installs and little waited yet: more may be on their way.
            if waiting.count < Self.smallGroup, ContinuousClock.now - gathering < Self.gatherWindow {
                usleep(500)
                continue
            }
            let group = Array(waiting.prefix(Self.maxGroup))
            waiting.removeFirst(group.count)
            gathering = .now
            // Every install of a session goes through the same importer.
            let importer = group[0].importer
            let prepared = importer.prepareGroup(group.map { ($0.order, $0.staged) })
            let barrier = importer.barrier()
            if let landed { complete(landed, after: barrier) }
            landed = Landed(group: importer.land(prepared, after: barrier), importer: importer, done: group.map(\.done))
        }
    }
}
