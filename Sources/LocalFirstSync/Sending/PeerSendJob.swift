import LFSyncContent
import LFSyncStore
import LFSyncSystem
import LFSyncWire

/// Sends one push to one peer: its offers as the push is fed (the first
/// waits for consent, the rest stream with a few outstanding), exactly the
/// chunks each reply asks for, and the receipts. A failure here touches only
/// this peer.
///
/// A driver: what each content's state is, what the ledger learns and what the
/// summary says is decided by `PeerPushMachine` alone; this actor does the I/O
/// (offers, chunk reads, sends, the receipt watch) and carries out its actions.
actor PeerSendJob {
    let session: PeerSession
    let push: OutgoingPush
    /// This job's consumer number in `push`: batches it has gone past can be dropped.
    let consumer: Int
    let reader: BroadcastChunkReader
    let store: SyncStateStore
    let transfer: OutgoingTransfer
    let replyTimeout: Duration
    /// The engine's clock: the wait for receipts is measured on it.
    let clock: any Clock<Duration>
    /// Offers sent ahead of the one whose chunks are going out.
    static let offerWindow = 3

    nonisolated var peer: Peer { session.peer }

    private var progress: TransferProgress
    /// State, phase and failure reason of the summary; its counts come from `machine`.
    private var summary: PeerTransferSummary
    /// Decides every content's state and the ledger's rows (see `PeerPushMachine`).
    private var machine = PeerPushMachine()
    /// Offers `0 ..< launched` were sent.
    private var launched = 0
    private var launchedOfferIDs: [UInt64] = []
    private var lastCommit = ContinuousClock.now
    /// Every offer was answered and every requested chunk sent (or the connection was cut).
    private var allOffered = false
    /// Where the session delivers this push's receipts; finished when none is owed any more.
    private var receiptSink: AsyncStream<WireMessage.Receipt>.Continuation?
    /// In the batch being sent: assets whose source failed here, and the chunk keys taken or given back.
    private var locallyFailed: [ContentID: String] = [:]
    private var settled = Set<BroadcastChunkReader.Key>()
    /// Why the connection was cut while offering, if it was.
    private var cut: String?

    private typealias PlannedChunk = BroadcastChunkReader.Request

    /// Small chunks are read and sent in runs of up to `runBytes` or
    /// `runChunks`: a folder of small files costs one hop to the reader's
    /// thread, one task and one write per run rather than per file, and its
    /// chunks share Noise messages. A chunk of `smallChunk` bytes or more — any
    /// chunk of a large file but its last — goes alone, as before: one chunk
    /// is read while the one before it is sent (measured: runs of large chunks
    /// made a 1 GiB push slower: median 3.23 s against 3.01 s, 8 pushes each).
    static let runBytes = 256 << 10
    static let runChunks = 64
    static let smallChunk = 64 << 10

    init(session: PeerSession, push: OutgoingPush, consumer: Int, reader: BroadcastChunkReader, store: SyncStateStore,
         transfer: OutgoingTransfer, replyTimeout: Duration, clock: any Clock<Duration> = ContinuousClock()) {
        self.session = session
        self.push = push
        self.consumer = consumer
        self.reader = reader
        self.store = store
        self.transfer = transfer
        self.replyTimeout = replyTimeout
        self.clock = clock
        progress = TransferProgress()
        summary = PeerTransferSummary(peer: session.peer, state: .offering, assetsStored: 0, assetsFailed: 0, chunkBytesSent: 0, failures: [:])
    }

    func run() async {
        publish(.offering)
        let (receipts, sink) = AsyncStream<WireMessage.Receipt>.makeStream()
        receiptSink = sink
        // From any thread: the flag the job checks between steps, and the end of the
        // receipts it waits for.
        transfer.onCancel { [cancelRequest] in
            cancelRequest.set()
            sink.finish()
        }
        // Every task of the job is a child of this group: it ends when they all have.
        await withDiscardingTaskGroup { group in
            // Receipts are taken as they come, while later offers are still being sent.
            let receiptsEnded = Eventual<Void>()
            group.addTask {
                await self.consume(receipts)
                receiptsEnded.resolve(())
            }
            let cut = await offerAndSend(receipts: sink, in: &group)
            allOffered = true
            if !machine.awaitsReceipts || cut != nil { sink.finish() }
            self.cut = cut
            // Ends when the last owed receipt is in, when the connection closes (the session
            // finishes the stream then), or when the peer has been silent too long.
            receiptDeadline.heard()
            group.addTask { await self.watchReceipts() }
            // Once the receipts have ended, the watch and any reply still on its way (a
            // cancelled push does not wait for them) are let go.
            await receiptsEnded.wait()
            group.cancelAll()
        }
        let cut = self.cut
        perform(machine.commitConfirmed())
        await session.sender.retire(launchedOfferIDs)
        // Whatever is still unresolved was cut off: offered but never receipted, or never offered.
        let closed = await session.closeReason.map { "connection lost before the peer confirmed: \($0)" }
        let lost = cut ?? gaveUp ?? closed ?? "connection closed before the peer confirmed"
        if cancelled {
            await leaveCancelled()
        } else {
            let failure: AssetFailure = gaveUp != nil && cut == nil ? .timedOut(reason: lost) : .connectionLost(reason: lost)
            perform(machine.owedReceiptsFail(failure))
            // Never offered: those fed already and those the scan has still to feed.
            await forEachBatch(from: launched) { perform(machine.neverOffered(Self.batch($0), failure)) }
        }
        perform(machine.unofferable(push.unofferable.map { ($0.asset.contentID, $0.reason) }))
        perform(machine.end())
        push.advance(consumer, to: .max)
        progress.assetsTotal = push.contentCount
        takeCounts()
        summary.state = summary.failures.isEmpty ? .completed : summary.state.isFinal ? summary.state
            : .failed(reason: summary.failures.values.map(\.description).sorted().first ?? lost)
        // The scan stopped part-way: what it never reached was not sent.
        if let failure = push.failure, case .completed = summary.state { summary.state = .failed(reason: failure) }
        if cancelled, summary.state == .completed || summary.failures.values.allSatisfy({ $0 == .cancelled }), !everythingConfirmed {
            summary.state = .cancelled
        }
        // The ledger says what the summary says before anyone hears the push ended.
        await store.barrier()
        publish(summary.state)
        transfer.peerEnded(summary)
    }

    /// A push to a peer that is not connected: every content of it, fed so far or still to
    /// come, fails with `reason` (a row already `synced` stays so), by the same rules.
    static func failUnconnected(
        _ peer: Peer, reason: String, push: OutgoingPush, consumer: Int, store: SyncStateStore, transfer: OutgoingTransfer
    ) async {
        var machine = PeerPushMachine()
        var actions: [PeerPushMachine.Action] = []
        var index = 0
        while await push.ready(index) {
            if let batch = push.batch(index) { actions += machine.neverOffered(Self.batch(batch), .notConnected(reason: reason)) }
            index += 1
            push.advance(consumer, to: index)
        }
        push.advance(consumer, to: .max)
        actions += machine.unofferable(push.unofferable.map { ($0.asset.contentID, $0.reason) })
        actions += machine.end()
        for case let .record(state, contents, why, keep) in actions {
            store.enqueue(.record(state, contents: contents, peer: peer.ledgerKey, reason: why, keep: keep))
        }
        await store.barrier()
        let summary = PeerTransferSummary(peer: peer, state: .failed(reason: reason), assetsStored: 0,
                                          assetsFailed: machine.failures.count, chunkBytesSent: 0, failures: machine.failures)
        transfer.publish(TransferUpdate(peer: peer, progress: TransferProgress(assetsTotal: push.contentCount), state: summary.state))
        transfer.peerEnded(summary)
    }

    /// Carries out the machine's actions. Ledger rows go to the database's own thread, in
    /// order, and the job goes on: a commit waits for an fsync, which must not hold the
    /// cooperative pool (`run()` waits for them all before it reports the end).
    private func perform(_ actions: [PeerPushMachine.Action]) {
        for action in actions {
            switch action {
            case let .record(state, contents, reason, keep):
                store.enqueue(.record(state, contents: contents, peer: peer.ledgerKey, reason: reason, keep: keep))
            case let .recordSynced(entries):
                store.enqueue(.synced(entries, peer: peer.ledgerKey))
                lastCommit = .now
            }
        }
        takeCounts()
    }

    /// The summary's counts, as the machine has them.
    private func takeCounts() {
        summary.assetsStored = machine.assetsStored
        summary.failures = machine.failures
        summary.assetsFailed = machine.failures.count
    }

    /// A batch of the push as the machine sees it.
    private static func batch(_ batch: OutgoingPush.Batch) -> PeerPushMachine.Batch {
        PeerPushMachine.Batch(offerID: batch.offerID, assets: batch.assets.map { ($0.contentID, $0.contentSize) }, repeated: batch.repeated)
    }

    /// A change of state is published at once; progress within a state at most
    /// every `progressInterval` (a push of 20,000 small files would otherwise
    /// publish 40,000 updates — one per chunk and per receipt — for a progress
    /// bar redrawn a few times a second).
    private func publish(_ state: TransferState) {
        progress.assetsDone = machine.assetsStored + machine.failures.count
        let now = ContinuousClock.now
        guard state != lastPublished.state || now - lastPublished.at >= Self.progressInterval else { return }
        lastPublished = (state, now)
        transfer.publish(TransferUpdate(peer: peer, progress: progress, state: state))
    }

    static let progressInterval: Duration = .milliseconds(50)
    private var lastPublished: (state: TransferState?, at: ContinuousClock.Instant) = (nil, .now)

    /// Offers every batch and sends what each reply asks for. Returns why the
    /// connection was cut, or nil.
    private func offerAndSend(receipts: AsyncStream<WireMessage.Receipt>.Continuation, in group: inout DiscardingTaskGroup) async -> String? {
        var replies: [Int: Eventual<Result<WireMessage.OfferReply, SyncError>>] = [:]
        let syncFollows = push.syncFollows ? await session.channel.peerCapabilities.contains(.pathVersions) : false
        /// Sends the offers up to `end` that are ready (the push may still be growing).
        func launch(upTo end: Int) {
            while launched < end, push.isReady(launched), let unmarked = push.offer(launched), let batch = push.batch(launched) {
                var marked = unmarked
                marked.push.syncFollows = syncFollows
                let offer = marked
                perform(machine.offered(Self.batch(batch)))
                progress.assetsTotal += offer.assets.count - batch.repeated.count
                let session = session, timeout = replyTimeout
                let reply = Eventual<Result<WireMessage.OfferReply, SyncError>>()
                replies[launched] = reply
                group.addTask { reply.resolve(await session.sender.offer(offer, receipts: receipts, timeout: timeout)) }
                launchedOfferIDs.append(offer.offerID)
                launched += 1
            }
        }
        var index = 0
        while await push.ready(index) {
            defer {
                index += 1
                push.advance(consumer, to: index)
            }
            if cancelled {
                // Replies still on their way are not awaited: a late "yes" is answered with a Cancel.
                await leave(atBatch: index, settled: [])
                return nil
            }
            // Consent first: nothing more is offered until the first offer is answered.
            launch(upTo: index == 0 ? 1 : index + Self.offerWindow)
            guard let reply = await replies.removeValue(forKey: index)?.wait(), let batch = push.batch(index) else { continue }
            switch reply {
            case let .failure(error):
                if case .connectionFailed = error {
                    await leave(atBatch: index, settled: [])
                    return error.description
                }
                // No answer in time: the first offer's silence ends the push, a later one's skips it.
                let state: TransferState, failure: AssetFailure
                switch error {
                case let .declined(reason): (state, failure) = (.declined(reason: reason), .declined(reason: error.description))
                case let .timedOut(reason): (state, failure) = (.declined(reason: reason), .timedOut(reason: error.description))
                default: (state, failure) = (.failed(reason: error.description), .failed(reason: error.description))
                }
                end(batch, state: state, failure: failure)
                if index == 0 {
                    await endPush(after: index, state: state, failure: failure)
                    return nil
                }
                await skip(batch: index)
            case let .success(answer) where !answer.accepted:
                let reason = answer.reason ?? (answer.decision == .declined ? "declined" : "refused")
                let declined = answer.decision == .declined
                let state: TransferState = declined ? .declined(reason: reason) : .failed(reason: "\(peer.name) could not take it: \(reason)")
                let failure: AssetFailure = declined ? .declined(reason: "declined by \(peer.name): \(reason)")
                    : .refused(reason: "refused by \(peer.name): \(reason)")
                end(batch, state: state, failure: failure)
                // A declined push is declined whole, as is a refused first offer (the push is refused);
                // a later refusal (no room, say) is news about that offer only.
                if index == 0 || declined {
                    for pending in replies.values { _ = await pending.wait() }
                    await endPush(after: index, state: state, failure: failure)
                    return nil
                }
                await skip(batch: index)
            case let .success(answer):
                if let cut = await send(answer.needed, of: batch, at: index, in: &group) { return cut }
            }
        }
        return nil
    }

    /// The push ends for this peer at batch `index`: every later batch, fed so
    /// far or still to come, ends unsent with the same state. Each is let go as
    /// soon as it is counted: the feed waits for the slowest peer, and a peer
    /// that keeps its place here would hold the scan (and every other peer) for good.
    private func endPush(after index: Int, state: TransferState, failure: AssetFailure) async {
        await leave(atBatch: index, settled: [])
        await forEachBatch(from: index + 1) { end($0, state: state, failure: failure) }
    }

    /// Runs `body` on every batch from `index` on, those the scan has fed and those
    /// it has still to feed, letting each go as it is counted: the feed waits for
    /// the slowest peer, and must never be held by one that has stopped.
    private func forEachBatch(from index: Int, _ body: (OutgoingPush.Batch) -> Void) async {
        var later = index
        push.advance(consumer, to: later)
        while await push.ready(later) {
            if let batch = push.batch(later) { body(batch) }
            later += 1
            push.advance(consumer, to: later)
        }
    }

    /// Sends the chunks a reply asked for, in order, reading each once for all
    /// peers; a chunk whose source changed fails its asset here, and the offer
    /// is cancelled so the receiver stops waiting for the rest of it.
    private func send(
        _ needed: [WireMessage.NeededChunks], of batch: OutgoingPush.Batch, at index: Int, in group: inout DiscardingTaskGroup
    ) async -> String? {
        let byID = Dictionary(batch.assets.map { ($0.contentID, $0) }, uniquingKeysWith: { first, _ in first })
        let segmentCipher = await session.channel.sharedSegmentCipher
        let acceptsZstd = await session.channel.peerCapabilities.contains(.zstd)
        var plan: [PlannedChunk] = []
        // The receiver's word bounds nothing: indices past a file's chunks are never visited,
        // and a file named twice is planned once.
        var planned = Set<BroadcastChunkReader.Key>()
        for entry in needed {
            guard let asset = byID[entry.contentID] else { continue }
            for file in entry.files where Int(file.fileIndex) < asset.files.count {
                let manifest = asset.files[Int(file.fileIndex)].manifest
                let offsets = manifest.chunks.reduce(into: [UInt64(0)]) { $0.append($0[$0.count - 1] + UInt64($1.length)) }
                for chunkIndex in file.chunks.indices(below: UInt32(clamping: manifest.chunks.count))
                where planned.insert(.init(contentID: entry.contentID, fileIndex: Int(file.fileIndex), chunkIndex: Int(chunkIndex))).inserted {
                    plan.append(PlannedChunk(
                        key: .init(contentID: entry.contentID, fileIndex: Int(file.fileIndex), chunkIndex: Int(chunkIndex)),
                        file: manifest, offset: offsets[Int(chunkIndex)], settled: batch.settled[manifest.path],
                        segmentCipher: segmentCipher))
                    progress.bytesTotal += UInt64(manifest.chunks[Int(chunkIndex)].length)
                }
            }
        }
        let keys = push.chunkKeys(ofBatch: index)
        await reader.beginBatch(index, keys: keys)
        let unneeded = keys.filter { !planned.contains($0) }
        await reader.abandon(unneeded)
        settled = Set(unneeded)
        locallyFailed = [:]
        publish(.transferring)

        // One run ahead: the next run is read and verified (on the reader's thread) while this
        // one is encrypted and sent (on the channel's), so the two halves run on both cores.
        let runs = Self.runs(of: plan)
        var upcoming = runs.isEmpty ? nil : await prefetch(runs[0], in: &group)
        for (position, run) in runs.enumerated() {
            let current = upcoming
            upcoming = position + 1 < runs.count ? await prefetch(runs[position + 1], in: &group) : nil
            guard let current else { continue }
            let fetched = await current.wait()
            if cancelled {
                // The run just fetched was read for nothing; the rest of the batch is given back.
                await reader.leave(atBatch: index, settled: settled, keysOfBatch: { [push] in push.chunkKeys(ofBatch: $0) })
                return nil
            }
            var messages: [WireMessage] = []
            var sent: (encoded: UInt64, raw: UInt64) = (0, 0)
            for (item, result) in zip(run, fetched) {
                guard let result, locallyFailed[item.key.contentID] == nil else { continue }
                switch result.flatMap({ prepared in Self.adapt(prepared, acceptingZstd: acceptsZstd, for: item.file.path) }) {
                case let .success(prepared):
                    messages.append(.chunk(.init(
                        offerID: batch.offerID, contentID: item.key.contentID, fileIndex: UInt16(item.key.fileIndex),
                        chunkIndex: UInt32(item.key.chunkIndex), payload: prepared.payload, sealedOnce: prepared.sealedOnce)))
                    sent.encoded += UInt64(prepared.payload.encodedLength)
                    sent.raw += UInt64(item.file.chunks[item.key.chunkIndex].length)
                case let .failure(error):
                    locallyFailed[item.key.contentID] = switch error {
                    case let .sourceChanged(path): "\(PrintablePath.escape(path.string)) changed while being sent"
                    case let .unreadable(path, why): "cannot read \(PrintablePath.escape(path.string)): \(why)"
                    }
                }
            }
            guard !messages.isEmpty else { continue }
            do {
                try await session.send(messages)
            } catch {
                // The run being fetched releases itself when read; the rest are given back.
                await reader.leave(atBatch: index, settled: settled, keysOfBatch: { [push] in push.chunkKeys(ofBatch: $0) })
                return error.description
            }
            summary.chunkBytesSent += sent.encoded
            progress.bytesDone += sent.raw
            publish(.transferring)
        }
        if !locallyFailed.isEmpty {
            // Failed here first, with the reason only this side knows: while the Cancel is being
            // sent this actor may take the peer's receipts, and the first failure of a content
            // is the one kept — the peer's "sender cancelled" must not stand in for the path.
            perform(machine.failedHere(locallyFailed))
            // Nothing more will come for those assets: let the peer stop waiting for them. Their
            // (failed) receipts still come, and change nothing.
            try? await session.send([.cancel(.init(offerID: batch.offerID, reason: "some files changed while being sent"))])
        }
        return nil
    }

    /// The chunk as this peer may receive it (see `PreparedChunk.forPeer`).
    private static func adapt(
        _ prepared: BroadcastChunkReader.PreparedChunk, acceptingZstd: Bool, for path: RelativePath
    ) -> Result<BroadcastChunkReader.PreparedChunk, BroadcastChunkReader.Failure> {
        do throws(WireError) {
            return .success(try prepared.forPeer(acceptingZstd: acceptingZstd))
        } catch {
            return .failure(.unreadable(path: path, reason: "could not decompress its chunk for a peer without zstd: \(error)"))
        }
    }

    /// Cuts the chunks to send into runs (see `runBytes`), in order.
    private static func runs(of plan: [PlannedChunk]) -> [ArraySlice<PlannedChunk>] {
        var runs: [ArraySlice<PlannedChunk>] = []
        var start = 0, bytes = 0, allSmall = true
        for (position, item) in plan.enumerated() {
            let length = Int(item.file.chunks[item.key.chunkIndex].length)
            let small = length < smallChunk
            if position > start, !small || !allSmall || bytes + length > runBytes || position - start >= runChunks {
                runs.append(plan[start..<position])
                (start, bytes, allSmall) = (position, 0, true)
            }
            bytes += length
            allSmall = allSmall && small
        }
        if start < plan.count { runs.append(plan[start...]) }
        return runs
    }

    /// Starts reading a run; chunks of an asset that already failed here are
    /// not read at all (nil in their places). Nil when nothing is left to read.
    private func prefetch(
        _ run: ArraySlice<PlannedChunk>, in group: inout DiscardingTaskGroup
    ) async -> Eventual<[Result<BroadcastChunkReader.PreparedChunk, BroadcastChunkReader.Failure>?]>? {
        for item in run { settled.insert(item.key) }
        let wanted = run.map { locallyFailed[$0.key.contentID] == nil }
        let failed = zip(run, wanted).filter { !$0.1 }.map(\.0.key)
        if !failed.isEmpty { await reader.abandon(failed) }
        let requests = zip(run, wanted).filter(\.1).map(\.0)
        guard !requests.isEmpty else { return nil }
        let reader = reader, consumer = consumer
        let fetched = Eventual<[Result<BroadcastChunkReader.PreparedChunk, BroadcastChunkReader.Failure>?]>()
        group.addTask {
            var payloads = await reader.payloads(for: requests, by: consumer).makeIterator()
            fetched.resolve(wanted.map { $0 ? payloads.next() : nil })
        }
        return fetched
    }

    /// This peer stops sending: gives back its demand from batch `index` on.
    private func leave(atBatch index: Int, settled: Set<BroadcastChunkReader.Key>) async {
        await reader.leave(atBatch: index, settled: settled, keysOfBatch: { [push] in push.chunkKeys(ofBatch: $0) })
    }

    /// This peer takes nothing of batch `index` and goes on with the next.
    private func skip(batch index: Int) async {
        let keys = push.chunkKeys(ofBatch: index)
        await reader.beginBatch(index, keys: keys)
        await reader.abandon(keys)
    }

    // MARK: - Cancelling

    /// Set by `OutgoingTransfer.cancel()`, from any thread: nothing more is offered or sent.
    private let cancelRequest = AtomicFlag()
    private var cancelled: Bool { cancelRequest.isSet }
    /// Whether every content of the push that was offered got its Receipt, with nothing left unoffered.
    private var everythingConfirmed = false

    /// Tells the peer to stop waiting for what will not come, and leaves what was
    /// not confirmed `pending` (a row already `synced` stays so).
    private func leaveCancelled() async {
        await cancelOpenOffers(reason: "the sender cancelled the transfer")
        var notOffered: [PeerPushMachine.Batch] = []
        for index in launched..<push.batchCount {
            if let batch = push.batch(index) { notOffered.append(Self.batch(batch)) }
        }
        let (actions, confirmedAll) = machine.cancelled(notOffered: notOffered)
        everythingConfirmed = confirmedAll && launched >= push.batchCount
        perform(actions)
    }

    // MARK: - Receipts

    /// One Cancel for every offer with Receipts still owed, so the peer stops waiting for them.
    private func cancelOpenOffers(reason: String) async {
        let open = machine.openOffers
        guard !open.isEmpty else { return }
        try? await session.send(open.map { .cancel(.init(offerID: $0, reason: reason)) })
    }

    private var receiptDeadline = ReceiptDeadline()
    /// Why this job stopped waiting for receipts, when it did.
    private var gaveUp: String?

    /// Gives up on the receipts once the peer has been silent longer than
    /// what it still owes can excuse (`ReceiptDeadline`).
    private func watchReceipts() async {
        while !Task.isCancelled, receiptSink != nil {
            // The time that passed, not the second asked for: a watcher woken late (a loaded
            // machine, or a test stepping the clock faster than the task runs) counts it all.
            do { receiptDeadline.passed(try await Self.sleep(on: clock, for: .seconds(1))) } catch { return }
            let owedBytes = machine.owedBytes
            guard machine.awaitsReceipts, receiptDeadline.hasExpired(owedBytes: owedBytes) else { continue }
            let silence = ReceiptDeadline.silence(owedBytes: owedBytes)
            gaveUp = "\(peer.name) sent no receipt for \(silence.components.seconds) s with \(machine.receiptsOwed) asset(s) unconfirmed"
            // Nothing more will be waited for: the peer may stop working on these offers.
            await cancelOpenOffers(reason: "the receiver stopped sending receipts")
            receiptSink?.finish()
            return
        }
    }

    /// Sleeps on `clock` and returns how long that took on it.
    private static func sleep<C: Clock<Duration>>(on clock: C, for duration: Duration) async throws -> Duration {
        let start = clock.now
        try await clock.sleep(for: duration)
        return start.duration(to: clock.now)
    }

    private func consume(_ receipts: AsyncStream<WireMessage.Receipt>) async {
        for await receipt in receipts {
            received(receipt)
        }
    }

    /// A receipt, for the machine; the `synced` rows it confirms are written in batches
    /// (a repeat push confirms everything at once: one commit, not one per asset). A row
    /// not yet written stays `inFlight`, so a crash only means offering it again.
    private func received(_ receipt: WireMessage.Receipt) {
        receiptDeadline.heard()
        perform(machine.received(receipt))
        if machine.confirmedCount >= 512 || ContinuousClock.now - lastCommit > .seconds(1) { perform(machine.commitConfirmed()) }
        publish(.transferring)
        if !machine.awaitsReceipts, allOffered { receiptSink?.finish() }
    }

    /// The whole batch ends unsent (declined, refused, no answer): no receipt is owed for it.
    private func end(_ batch: OutgoingPush.Batch, state: TransferState, failure: AssetFailure) {
        if case .declined = state { summary.state = state } else if !summary.state.isFinal { summary.state = state }
        perform(machine.ended(Self.batch(batch), failure))
    }
}
