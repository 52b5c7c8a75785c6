import LFSyncContent
import LFSyncCrypto
import LFSyncStore
import LFSyncLanding
import LFSyncSystem
import LFSyncWire

/// The incoming side of one connection: the pushes this peer offers us,
/// taken through their steps — ask (consent), plan, write chunks, verify,
/// install, receipt.
///
/// `IncomingOffers` decides every step (a value type, tested without
/// sockets); this actor carries out what it asks for: the disk work on
/// threads of its own (`ChunkWriteQueue`, `AssetInstallQueue`), the ledger
/// rows, and the replies and receipts, which leave through the session.
///
/// What the peer sends arrives through the session's loop; everything else — the
/// threads reporting back, a person's answer, a batch of replies ready to leave — is an
/// `Event` that `run()` consumes, one at a time. Its waits (for an answer, for a flush to
/// commit and send) are child tasks of `run()`, so nothing this side starts outlives it.
actor SessionReceiver {
    private enum Event: Sendable {
        /// The write thread landed chunks (`ChunkWriteQueue.takeLanded()`).
        case chunksWritten
        /// The install threads verified files (`verifications`).
        case verificationsReady
        /// The install threads installed assets (`installations`).
        case installationsReady
        /// An install that could not even be queued.
        case installFailed(IncomingOffers.InstallOrder, ReceiveError)
        /// A new push waits for its yes or no.
        case awaitDecision(pushID: UInt64, OneShotDecision)
        /// The outbox or the rows to record have something: a flush is due.
        case flush
        /// Sending failed: the connection ends.
        case sendFailed(String)
    }

    private let events = AsyncStream<Event>.makeStream()
    private let peer: Peer
    private let context: SessionContext
    private var incoming = IncomingOffers()
    // The files behind the contents `IncomingOffers` names by hash: resources this side holds
    // open, not a second record of their state (the machine alone decides when each is
    // written, verified, installed or discarded).

    /// Contents being received, by file hash (see `IncomingOffers`).
    private var partials: [Hash256: IncomingFile] = [:]
    /// Contents verified and staged, waiting for the placements that need them.
    private var staged: [Hash256: StagedFile] = [:]
    /// One-chunk contents the write thread verified as it wrote them, for the
    /// moment `IncomingOffers` asks to verify them (see `ChunkWriteQueue`).
    private var verifiedEarly: [Hash256: Result<StagedFile, ReceiveError>] = [:]
    /// The application's view of each push being received, by push ID.
    private var transfers: [UInt64: ReceiveSessionHandle] = [:]
    private let decompressor = ZstdDecompressor()
    /// Chunks are written on a thread of their own, in order.
    private let chunkWrites = ChunkWriteQueue()
    /// Verifying and installing (fsync, rename) run on threads of their own,
    /// so the next chunks keep coming while the disk catches up.
    private let installs = AssetInstallQueue()
    /// What those threads report back, collected in batches.
    private let verifications = OutcomeBatch<(hash: Hash256, result: Result<StagedFile, ReceiveError>)>()
    private let installations = OutcomeBatch<(order: IncomingOffers.InstallOrder, result: Result<[InstalledFile], ReceiveError>)>()
    /// Jobs handed to those threads and not reported back yet: the session
    /// stops reading the peer while there are too many (`roomForMore()`).
    private let jobs = Monitor(0)
    /// Replies and receipts, and the ledger rows of assets received, waiting to
    /// leave together: a burst of installs (hundreds of small files landed
    /// under one durability barrier) costs one send and one commit.
    private var outbox: [WireMessage] = []
    private var receivedToRecord: [(content: ContentID, bytes: UInt64)] = []
    /// The files of each content planned here, by role and file hash, until it is recorded
    /// (or fails): recorded with it, so that a holding check finds it at any path.
    private var compositions: [ContentID: SyncStateStore.Composition] = [:]
    private var flushScheduled = false
    /// The last flush started: flushes run one after another, so the messages of
    /// one never overtake those of the one before while it waits for its commit.
    private var flushing: Eventual<Void>?
    /// Set once the connection is ending: nothing new is planned or staged.
    private var closing = false
    /// Where replies and receipts go.
    private let channel: SecureChannel
    /// The session this side belongs to, told when sending fails; it owns
    /// this side, hence weak.
    private weak var session: PeerSession?

    /// Beyond this many queued jobs a slow disk slows the peer down: the
    /// session stops reading until the queue drains. Jobs are small (their
    /// data is already on disk), and a deep queue is what lets installs land
    /// in large groups under one durability barrier.
    private static let maxQueuedJobs = 1024
    /// And beyond this many bytes of chunks waiting to be written. 16 MiB keeps
    /// the disk busy (a 1 GiB push was no slower than with 32: paired ratio 0.98
    /// over 8 pairs) and the receiver of one 4 GiB file under the performance targets of ARCHITECTURE.md's design record
    /// 100 MiB: 70–78 MiB at its peak, 97–107 with 32.
    private static let maxQueuedWriteBytes = 16 << 20

    init(peer: Peer, channel: SecureChannel, context: SessionContext) {
        self.peer = peer
        self.channel = channel
        self.context = context
    }

    func attach(to session: PeerSession) {
        self.session = session
    }

    // MARK: - What the peer sent (handed over by the session's loop, in order)

    // Each ignores what arrives once `close()` has begun: the session's loop checked it was
    // open before handing the message over, but the close may have started since.

    func received(_ offer: WireMessage.Offer) async throws(SyncError) {
        guard !closing else { return }
        // Honoured only from a peer that keeps path versions (it alone sends the sync that
        // follows) and that this device takes syncs from (it accepts its pushes unasked): from
        // any other the sync is declined, and its offers land as a copy's do.
        if offer.push.syncFollows, context.trust.acceptsOffers(from: peer.deviceID),
           await channel.peerCapabilities.contains(.pathVersions) { syncFollows.insert(offer.offerID) }
        await perform(try incoming.received(offer))
    }

    /// Offers of pushes a sync follows (`PushHeader.syncFollows`), until planned.
    private var syncFollows = Set<UInt64>()

    func cancelled(_ cancel: WireMessage.Cancel) async {
        guard !closing else { return }
        await perform(incoming.cancelled(offerID: cancel.offerID, reason: cancel.reason))
    }

    func received(_ chunk: WireMessage.Chunk) async throws(SyncError) {
        guard !closing else { return }
        guard let destination = try incoming.destination(of: chunk) else { return }
        let bytes: ArraySlice<UInt8>
        do { bytes = try chunk.payload.decoded(using: decompressor) } catch {
            throw .malformedMessage("chunk \(chunk.chunkIndex): \(error)")
        }
        guard let file = partials[destination.fileHash] else {
            await perform(incoming.chunkWritten(destination, bytes: bytes.count, .failure(.partialTaken(fileHash: destination.fileHash))))
            return
        }
        jobStarted()
        chunkWrites.write(HandedOver(file), chunkAt: Int(chunk.chunkIndex), bytes: bytes, for: destination) { [events = events.continuation] in
            events.yield(.chunksWritten)
        }
    }

    /// Returns once the disk has caught up enough to read the peer's next
    /// message (backpressure): fewer jobs queued than the limit, and not too
    /// many bytes of chunks waiting to be written. Waited for without
    /// entering this actor, which the jobs reporting back need.
    nonisolated func roomForMore() async {
        let writes = chunkWrites
        await jobs.wait(orIfCancelled: ()) { inFlight in
            inFlight < Self.maxQueuedJobs && (inFlight == 0 || writes.bytesQueued <= Self.maxQueuedWriteBytes) ? () : nil
        }
    }

    // MARK: - Carrying out what `IncomingOffers` decided

    private func perform(_ actions: [IncomingOffers.Action]) async {
        for action in actions {
            switch action {
            case let .announce(pushID, header, firstAssets):
                announce(pushID: pushID, header: header, firstAssets: firstAssets)
            case let .plan(offerID, assets, known):
                for asset in assets { compositions[asset.contentID] = asset.files.map { ($0.role, $0.manifest.fileHash) } }
                let tracked: Set<RelativePath>? = if syncFollows.remove(offerID) != nil {
                    await context.leaveToSync(peer, assets.flatMap { $0.placements.flatMap { $0.files.map(\.manifest.path) } })
                } else { nil }
                guard let result = await plan(assets, known: known, leavingToSync: tracked) else { return }
                await perform(incoming.planned(offerID: offerID, result))
            case let .send(messages):
                outbox += messages
                scheduleFlush()
            case let .verify(hash):
                await verify(hash)
            case let .install(order):
                install(order)
            case let .discard(hash):
                partials[hash] = nil
                if let file = staged.removeValue(forKey: hash) { try? file.discard() }
            case let .progress(pushID, progress):
                transfers[pushID]?.update { $0 = progress }
            case let .outcome(pushID, contentID, outcome):
                if case .failed = outcome { compositions[contentID] = nil }
                transfers[pushID]?.record(outcome, for: contentID)
            case let .recordReceived(contents):
                receivedToRecord += contents
                scheduleFlush()
            case let .pushEnded(pushID):
                transfers.removeValue(forKey: pushID)?.end()
            case let .log(line):
                context.log("\(peer): \(line)")
            }
        }
    }

    /// A new push: the application hears of it, and the trust policy, a person or the clock answers.
    private func announce(pushID: UInt64, header: WireMessage.PushHeader, firstAssets: [PlacedAsset]) {
        let decision = OneShotDecision()
        let handle = ReceiveSessionHandle(decision: decision)
        transfers[pushID] = handle
        let automatic = context.trust.acceptsOffers(from: peer.deviceID) || firstAssets.isEmpty
        if automatic { decision.decide(true) }
        context.announce(IncomingTransfer(
            from: peer, offerID: pushID, items: firstAssets.flatMap(\.placements), fileCount: header.fileCount,
            totalByteCount: header.byteCount, acceptedAutomatically: automatic, decision: decision, session: handle))
        events.continuation.yield(.awaitDecision(pushID: pushID, decision))
    }

    private func decided(pushID: UInt64, accepted: Bool, expired: Bool) async {
        guard !closing else { return }
        if !accepted { context.log(expired ? "offer from \(peer) expired unanswered" : "declined offer from \(peer)") }
        // The sender's person should know whether someone said no or nobody was there.
        let reason = expired ? "nobody answered in time" : "declined"
        await perform(incoming.decided(pushID: pushID, accepted: accepted, reason: reason))
    }

    /// Stages an offer's files, on the write thread: planning stats the library,
    /// reads the chunk index and may re-hash a partial it adopts. `IncomingOffers`
    /// plans again if what the plan counted on changed meanwhile. Nil when the
    /// connection closed meanwhile: nobody will write these, and dropping them
    /// releases their locks.
    private func plan(_ assets: [PlacedAsset], known: Set<Hash256>, leavingToSync tracked: Set<RelativePath>?) async -> Result<IncomingOffers.Plan, ReceiveError>? {
        do throws(ReceiveError) {
            let importer: LibraryImporter
            do throws(SyncError) { importer = try context.importer() } catch { throw ReceiveError.libraryUnavailable(error.description) }
            let prepared = try await chunkWrites.plan(assets, known: known, leavingToSync: tracked, with: importer)
            guard !closing else { return nil }
            for (hash, file) in prepared.value.files { partials[hash] = file }
            return .success(prepared.value.plan)
        } catch {
            return .failure(error)
        }
    }

    // MARK: - Writing, verifying, installing: off this actor

    private func chunksWritten() async {
        for written in chunkWrites.takeLanded() {
            jobDone()
            let hash = written.destination.fileHash
            if let early = written.verified { verifiedEarly[hash] = early }
            await perform(incoming.chunkWritten(written.destination, bytes: written.byteCount, written.result))
            // Not asked for (the content failed or was cancelled meanwhile): nobody will install it.
            if case let .success(file)? = verifiedEarly.removeValue(forKey: hash) { try? file.discard() }
        }
    }

    private func verify(_ hash: Hash256) async {
        if let early = verifiedEarly.removeValue(forKey: hash) {
            partials[hash] = nil
            await verified(hash, early)
            return
        }
        guard let file = partials.removeValue(forKey: hash) else {
            await verified(hash, .failure(.partialTaken(fileHash: hash)))
            return
        }
        // The file is handed over: this actor does not touch it again.
        jobStarted()
        let verifications = verifications
        installs.verify(HandedOver(file)) { [events = events.continuation] result in
            if verifications.add((hash, result)) { events.yield(.verificationsReady) }
        }
    }

    private func collectVerifications() async {
        for (hash, result) in verifications.takeAll() {
            jobDone()
            await verified(hash, result)
        }
    }

    private func verified(_ hash: Hash256, _ result: Result<StagedFile, ReceiveError>) async {
        if case let .success(file) = result {
            // The connection ended meanwhile: nobody will install it; give its chunks back to a later offer.
            guard !closing || !incoming.isIdle else {
                try? file.discard()
                return
            }
            staged[hash] = file
        }
        await perform(incoming.verified(hash, result.map { _ in () }))
    }

    private func install(_ order: IncomingOffers.InstallOrder) {
        var sources: [Hash256: StagedFile] = [:]
        for row in order.sources {
            for source in row {
                switch source {
                case .inPlace: break
                case let .copy(hash): sources[hash] = staged[hash]
                case let .take(hash): sources[hash] = staged.removeValue(forKey: hash) ?? sources[hash]
                }
            }
        }
        let importer: LibraryImporter
        do { importer = try context.importer() } catch {
            events.continuation.yield(.installFailed(order, .libraryUnavailable(error.description)))
            return
        }
        jobStarted()
        // Queued now, in the order decided: one that copies a content runs before the one that takes it.
        let installations = installations
        installs.install(order, staged: sources, with: importer) { [events = events.continuation] result in
            if installations.add((order, result)) { events.yield(.installationsReady) }
        }
    }

    private func collectInstallations() async {
        for (order, result) in installations.takeAll() {
            jobDone()
            await installed(order, result)
        }
    }

    private func installed(_ order: IncomingOffers.InstallOrder, _ result: Result<[InstalledFile], ReceiveError>) async {
        await perform(incoming.installed(offerID: order.offerID, contentID: order.asset.contentID, result))
    }

    private func jobStarted() {
        jobs.withLock { $0 += 1 }
    }

    private func jobDone() {
        jobs.withLock { $0 -= 1 }
    }

    // MARK: - Replies, receipts and ledger rows, in batches

    private func scheduleFlush() {
        guard !flushScheduled else { return }
        flushScheduled = true
        events.continuation.yield(.flush)
    }

    /// Starts a flush that runs once the one before it has finished.
    private func startFlush(in group: inout DiscardingTaskGroup) {
        let previous = flushing, done = Eventual<Void>()
        flushing = done
        group.addTask {
            await previous?.wait()
            await self.flush()
            done.resolve(())
        }
    }

    /// Records what was received, then sends what the outbox holds, in order.
    /// The ledger rows are committed (on the database's thread) before the
    /// Receipts that follow them leave: what we confirm, our ledger has.
    private func flush() async {
        flushScheduled = false
        let contents = receivedToRecord, messages = outbox
        receivedToRecord = []
        outbox = []
        if !contents.isEmpty {
            let made = contents.compactMap { item in compositions.removeValue(forKey: item.content).map { (item.content, $0) } }
            await context.receivedAssets(contents, madeOf: made, from: peer)
        }
        guard !messages.isEmpty else { return }
        // Straight on the channel, even while `close()` lets queued installs finish: the
        // channel is still open then, and the peer waits for exactly these receipts.
        do { try await channel.send(messages) } catch {
            // Closed by `run()`, not here: `close()` waits for the flushes, this one
            // included, so awaiting it here would wait for itself.
            events.continuation.yield(.sendFailed(error.description))
        }
    }

    // MARK: - The loop

    /// Consumes this side's events until `close()` has finished; the session runs it
    /// beside its read loop. Waits still under way then (an unanswered question) are cancelled.
    func run() async {
        await withDiscardingTaskGroup { group in
            for await event in events.stream {
                switch event {
                case .chunksWritten:
                    await chunksWritten()
                case .verificationsReady:
                    await collectVerifications()
                case .installationsReady:
                    await collectInstallations()
                case let .installFailed(order, error):
                    await installed(order, .failure(error))
                case let .awaitDecision(pushID, decision):
                    let timeout = context.decisionTimeout, clock = context.clock
                    group.addTask {
                        guard let accepted = await decision.waitUnlessCancelled(timeout: timeout, clock: clock) else { return }
                        await self.decided(pushID: pushID, accepted: accepted, expired: decision.hasExpired)
                    }
                case .flush:
                    startFlush(in: &group)
                case let .sendFailed(reason):
                    // A task of its own: closing waits for this loop to drain the jobs in flight.
                    group.addTask { [session] in await session?.close(reason: reason) }
                }
            }
            group.cancelAll()
        }
    }

    // MARK: - Closing

    /// The connection is ending: what is already queued lands (or fails) and
    /// is reported, every push in progress ends, and verified chunks stay in
    /// staging, where the next offer of the same content resumes from them.
    func close(reason: String) async {
        guard !closing else { return }
        closing = true
        // Waited for even if the closing task was cancelled: the jobs hold files of this side.
        await jobs.wait { $0 == 0 ? () : nil }
        await perform(incoming.closed(reason: reason))
        await flushing?.wait()
        await flush()
        for file in staged.values { try? file.discard() }
        staged = [:]
        partials = [:]
        for handle in transfers.values { handle.end() }
        transfers = [:]
        events.continuation.finish()
    }
}
