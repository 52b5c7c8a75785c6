import LFSyncContent
import LFSyncCrypto
import LFSyncStore
import LFSyncLanding
import Dispatch
import LFSyncSystem
import Synchronization

/// Writes received chunks into their partial files on a thread of its own,
/// and plans offers on another, for one receiving session.
///
/// A `pwrite` usually copies into the page cache and returns; under writeback
/// pressure it waits for the disk, and on the session's actor that wait would
/// hold a thread of the cooperative pool (and with it the peer's other
/// messages, timers and every other task). Writes run in the order they were
/// queued; their outcomes are collected and handed back in batches, one
/// wake-up of the session for however many landed meanwhile.
///
/// A one-chunk file — most files of a photo library by count — is complete
/// once its chunk is written, and finishing it is cheap then (its hash was
/// computed on the way in, and it was created under its staged name: no read,
/// no rename). It is verified here, in the same job, rather than handed to the
/// verify queue and back: two thread hops less per small file.
final class ChunkWriteQueue: Sendable {
    struct Written: Sendable {
        let destination: IncomingOffers.ChunkDestination
        let byteCount: Int
        let result: Result<Void, ReceiveError>
        /// A one-chunk file verified as soon as it was written (see above);
        /// nil when there was nothing to verify yet.
        let verified: Result<StagedFile, ReceiveError>?
    }

    private let thread = BlockingQueue(label: "lfsync.receive.write")
    /// Where large chunks are hashed, beside the write thread (see `write`).
    private let hashing = DispatchQueue(label: "lfsync.receive.hash", attributes: .concurrent)
    private let planner = BlockingQueue(label: "lfsync.receive.plan")
    private let landed = OutcomeBatch<Written>()
    private let queuedBytes = Atomic<Int>(0)

    /// Bytes queued and not written yet (what the session holds in memory for them).
    var bytesQueued: Int { queuedBytes.load(ordering: .relaxed) }

    /// Queues the write of chunk `index` into `file`. When it has landed and no
    /// earlier outcome is still waiting to be collected, `wake` is called (on
    /// the queue's thread): the session then collects with `takeLanded()`.
    func write(
        _ file: HandedOver<IncomingFile>, chunkAt index: Int, bytes: ArraySlice<UInt8>,
        for destination: IncomingOffers.ChunkDestination, wake: @escaping @Sendable () -> Void
    ) {
        queuedBytes.add(bytes.count, ordering: .relaxed)
        // Checking a chunk against its hash is most of a receiver's CPU: a large chunk is
        // hashed on another core while this queue writes the ones before it, so one
        // thread's hashing does not bound the push. A small chunk is hashed in its write
        // job: handing it to another thread would cost more than hashing it.
        let hashed = bytes.count >= Self.parallelHashMinimum ? PendingHash(bytes, on: hashing) : nil
        thread.async {
            let result = Result { () throws(ReceiveError) in try file.value.write(chunkAt: index, bytes: bytes, hash: hashed?.value()) }
            var verified: Result<StagedFile, ReceiveError>?
            if case .success = result, file.value.manifest.chunks.count == 1 {
                verified = Result { () throws(ReceiveError) in try file.value.verify() }
            }
            self.queuedBytes.subtract(bytes.count, ordering: .relaxed)
            let written = Written(destination: destination, byteCount: bytes.count, result: result, verified: verified)
            if self.landed.add(written) { wake() }
        }
    }

    /// Chunks at least this large are hashed beside the write thread.
    static let parallelHashMinimum = 64 << 10

    /// A chunk's hash being computed on another thread.
    private final class PendingHash: Sendable {
        private let result = LockedState<Hash256?>(nil)
        private let done = DispatchSemaphore(value: 0)

        init(_ bytes: ArraySlice<UInt8>, on queue: DispatchQueue) {
            queue.async { [self] in
                let hash = ContentHash.chunk(bytes)
                result.withLock { $0 = hash }
                done.signal()
            }
        }

        /// Waits for the hash (blocking: called on the write thread, never on the pool).
        func value() -> Hash256? {
            done.wait()
            return result.withLock { $0 }
        }
    }

    /// Plans an offer on a thread of its own: planning stats the library,
    /// reads the chunk index and may re-hash a partial it adopts, all of which
    /// may wait for the disk. Not behind the writes: the peer sends an offer's
    /// chunks only once it is answered, so a plan queued behind 16 MiB of
    /// small-file writes stalled the sender (measured: 20,000 small files
    /// landed 8 % faster with this and `AssetInstallQueue`'s completion thread).
    /// A plan running beside writes of earlier offers is what two sessions
    /// receiving into one library already are: partials are taken under their
    /// locks, and a plan never touches a content `known` to be on its way.
    func plan(
        _ assets: [PlacedAsset], known: Set<Hash256>, leavingToSync tracked: Set<RelativePath>?, with importer: LibraryImporter
    ) async throws(ReceiveError) -> HandedOver<LibraryImporter.PreparedOffer> {
        try await planner.run { () throws(ReceiveError) in HandedOver(try importer.prepare(assets, known: known, leavingToSync: tracked)) }
    }

    /// The outcomes that landed since the last call, in the order written.
    func takeLanded() -> [Written] {
        landed.takeAll()
    }
}
