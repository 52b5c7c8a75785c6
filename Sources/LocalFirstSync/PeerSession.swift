import Foundation
import LFSyncContent
import LFSyncCrypto
import LFSyncStore
import LFSyncSystem
import LFSyncWire

/// One connected peer: its secure channel, the offers in flight both ways,
/// and the single loop that consumes everything the peer sends.
///
/// Every message from the peer is handled here, in order, on this actor, so
/// interleavings across several peers cannot corrupt per-peer state; the
/// owning `LocalSync` only routes. The receiving side's rules live in
/// `IncomingOffers`, which decides; this actor does the I/O it asks for.
actor PeerSession {
    let peer: Peer
    let channel: SecureChannel
    private let context: SessionContext
    /// The sending side's rules (a value type, like `incoming`) and the tasks waiting on it.
    private var outgoing = OutgoingOffers()
    private var replyWaiters: [UInt64: CheckedContinuation<Result<WireMessage.OfferReply, SyncError>, Never>] = [:]
    private var receiptStreams: [UInt64: AsyncStream<WireMessage.Receipt>.Continuation] = [:]
    /// The receiving side's rules; this actor does the I/O they ask for.
    private var incoming = IncomingOffers()
    /// Contents being received, by file hash (see `IncomingOffers`).
    private var partials: [Hash256: IncomingFile] = [:]
    /// Contents verified and staged, waiting for the placements that need them.
    private var staged: [Hash256: StagedFile] = [:]
    /// The application's view of each push being received, by push ID.
    private var transfers: [UInt64: ReceiveSessionHandle] = [:]
    private var loop: Task<Void, Never>?
    /// A Ping went out after a quiet spell and nothing has come back since.
    private var pingUnanswered = false
    private var closedReason: String?
    private var onClose: (@Sendable (PeerSession) async -> Void)?
    private let decompressor = ZstdDecompressor()
    /// Decrypts the next chunks while this actor verifies and writes the current one.
    private let readAhead: ChannelReadAhead
    /// Finishing (verify) and installing (fsync, rename) run off this actor,
    /// so the next chunks keep coming while the disk catches up.
    private let installs = AssetInstallQueue()
    /// Chunks are written off this actor too, in order (see `ChunkWriteQueue`).
    private let chunkWrites = ChunkWriteQueue()
    private var jobsInFlight = 0
    private var jobWaiters: [CheckedContinuation<Void, Never>] = []
    /// Replies and receipts, and the ledger rows of assets received, waiting to
    /// leave together: a burst of installs (hundreds of small files landed
    /// under one durability barrier) costs one send and one commit.
    private var outbox: [WireMessage] = []
    private var receivedToRecord: [(content: ContentID, bytes: UInt64)] = []
    private var flushScheduled = false
    /// The flush under way: flushes run one after another, so the messages of
    /// one never overtake those of the one before while it waits for its commit.
    private var flushing: Task<Void, Never>?
    /// Beyond this many queued jobs a slow disk slows the peer down: the
    /// session stops reading until the queue drains. Jobs are small (their
    /// data is already on disk), and a deep queue is what lets installs land
    /// in large groups under one durability barrier.
    private static let maxQueuedJobs = 1024
    /// And beyond this many bytes of chunks waiting to be written.
    private static let maxQueuedWriteBytes = 32 << 20

    init(peer: Peer, channel: SecureChannel, context: SessionContext) {
        self.peer = peer
        self.channel = channel
        self.context = context
        readAhead = ChannelReadAhead(channel: channel)
    }

    func start(onClose: @escaping @Sendable (PeerSession) async -> Void) {
        self.onClose = onClose
        readAhead.start()
        loop = Task { await self.run() }
    }

    var isOpen: Bool { closedReason == nil }
    /// Why the connection ended, once it has.
    var closeReason: String? { closedReason }

    // MARK: - Sending side

    /// Sends an offer and waits for the peer's answer (which may take as long
    /// as its user does). Its receipts go to `receipts`, which the caller
    /// finishes; the session finishes it too when the connection ends.
    func offer(_ offer: WireMessage.Offer, receipts: AsyncStream<WireMessage.Receipt>.Continuation, timeout: Duration) async -> Result<WireMessage.OfferReply, SyncError> {
        if let closedReason {
            receipts.finish()
            return .failure(.connectionFailed(closedReason))
        }
        let offerID = offer.offerID
        guard outgoing.sending(offerID, assetCount: offer.assets.count) else {
            return .failure(.localFailure("offer \(offerID) was already sent on this connection"))
        }
        receiptStreams[offerID] = receipts
        let timer = Deadline.after(timeout, on: context.clock) { [weak self] in
            await self?.expire(offerID)
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { continuation in
            replyWaiters[offerID] = continuation
            Task { await self.sendOffer(offer) }
        }
    }

    private func sendOffer(_ offer: WireMessage.Offer) async {
        // Our own encoding failure fails this offer alone; a lost connection fails every one.
        do { try await send([.offer(offer)]) } catch {
            if outgoing.replyAbandoned(offer.offerID) { resumeReplyWaiter(offer.offerID, .failure(error)) }
        }
    }

    func send(_ messages: [WireMessage]) async throws(SyncError) {
        if let closedReason { throw .connectionFailed(closedReason) }
        do { try await channel.send(messages) } catch {
            if case .unencodable = error { throw .localFailure(error.description) }
            await close(reason: error.description)
            throw .connectionFailed(error.description)
        }
    }

    /// The sender is done with these offers: later replies and receipts for them are dropped.
    func retireOffers(_ offerIDs: [UInt64]) {
        for offerID in outgoing.retire(offerIDs) {
            receiptStreams.removeValue(forKey: offerID)
        }
    }

    private func sendOrClose(_ messages: [WireMessage]) async {
        do { try await send(messages) } catch {}
    }

    private func expire(_ offerID: UInt64) {
        guard outgoing.replyTimedOut(offerID) else { return }
        resumeReplyWaiter(offerID, .failure(.timedOut("the peer did not answer the offer in time")))
    }

    private func resumeReplyWaiter(_ offerID: UInt64, _ result: Result<WireMessage.OfferReply, SyncError>) {
        replyWaiters.removeValue(forKey: offerID)?.resume(returning: result)
    }

    // MARK: - The loop

    private func run() async {
        while true {
            let received: ChannelReadAhead.Incoming?
            do { received = try await readAhead.next().get() } catch {
                if case .transport(.timedOut(.idle)) = error {
                    // Quiet is fine (a person may be deciding) and a ping proves the peer is still
                    // there; a peer that did not answer the last one (nor sent anything else) is
                    // gone, or stuck: waiting on it for ever would hold a cron push and its lock.
                    if pingUnanswered {
                        await close(reason: "\(peer) stopped answering: nothing received for \((WireProtocol.idleInterval * 2).components.seconds) s, not even a Pong")
                        return
                    }
                    pingUnanswered = true
                    await sendOrClose([.ping(.init(nonce: UInt64.random(in: 0...UInt64.max)))])
                    continue
                }
                // A frame or message that breaks the protocol is named to the peer before we hang up
                // (the stream can't be trusted past it, but our sending half still works). Anything
                // below that (decryption, the socket) leaves nothing to say.
                if let reply = error.errorReply {
                    context.log("dropped \(peer): \(error)")
                    try? await channel.send(.error(reply))
                }
                await close(reason: error.description)
                return
            }
            guard let received else {
                await close(reason: "\(peer) closed the connection")
                return
            }
            pingUnanswered = false
            // Closed while we waited (by the owner, or a replacement connection): what is still
            // buffered belongs to a session that no longer exists.
            guard closedReason == nil else { return }
            do throws(SyncError) {
                try await handle(received.message)
            } catch {
                // A peer that breaks the protocol is told why, then dropped (PROTOCOL.md, "Error"
                // says which code for what).
                context.log("dropped \(peer): \(error)")
                let code: WireMessage.ErrorMessage.Code = switch error {
                case .malformedMessage: .malformedMessage
                case .declined: .notAccepted
                default: .unexpectedMessage
                }
                try? await channel.send(.error(.init(code: code, message: WireText.fitted(error.description, maxBytes: 1000))))
                await close(reason: error.description)
                return
            }
            await waitForJobsToDrain()
        }
    }

    private func handle(_ message: WireMessage) async throws(SyncError) {
        switch message {
        case let .offer(offer):
            await perform(try incoming.received(offer))
        case let .offerReply(reply):
            switch try outgoing.replyArrived(reply) {
            case .deliver:
                resumeReplyWaiter(reply.offerID, .success(reply))
            case .cancelLateAcceptance:
                try await send([.cancel(.init(offerID: reply.offerID, reason: "the answer came after the sender stopped waiting for it"))])
            case .ignore:
                break
            }
        case let .chunk(chunk):
            try await received(chunk)
        case let .receipt(receipt):
            if try outgoing.receiptArrived(for: receipt.offerID) {
                receiptStreams[receipt.offerID]?.yield(receipt)
            }
        case let .cancel(cancel):
            await perform(incoming.cancelled(offerID: cancel.offerID, reason: cancel.reason))
        case let .ping(ping):
            try await send([.pong(.init(nonce: ping.nonce))])
        case .pong:
            break
        case let .error(error):
            throw .peerFailed(error.message)
        case .pull:
            try await context.pullRequested(by: peer)
        case .hello, .connectionDecision:
            throw .protocolViolation("\(message.type) after the connection was set up")
        }
    }

    // MARK: - Receiving side

    private func received(_ chunk: WireMessage.Chunk) async throws(SyncError) {
        guard let destination = try incoming.destination(of: chunk) else { return }
        let bytes: ArraySlice<UInt8>
        do { bytes = try chunk.payload.decoded(using: decompressor) } catch {
            throw .malformedMessage("chunk \(chunk.chunkIndex): \(error)")
        }
        guard let file = partials[destination.fileHash] else {
            await perform(incoming.chunkWritten(destination, bytes: bytes.count, .failure(.partialTaken(fileHash: destination.fileHash))))
            return
        }
        jobsInFlight += 1
        chunkWrites.write(HandedOver(file), chunkAt: Int(chunk.chunkIndex), bytes: bytes, for: destination) { [weak self] in
            Task { await self?.chunksWritten() }
        }
    }

    private func chunksWritten() async {
        for written in chunkWrites.takeLanded() {
            jobDone()
            await perform(incoming.chunkWritten(written.destination, bytes: written.byteCount, written.result))
        }
    }

    /// Carries out what `IncomingOffers` decided, in order.
    private func perform(_ actions: [IncomingOffers.Action]) async {
        for action in actions {
            switch action {
            case let .announce(pushID, header, firstAssets):
                announce(pushID: pushID, header: header, firstAssets: firstAssets)
            case let .plan(offerID, assets, known):
                // On the write thread: planning stats the library, reads the chunk index and
                // may re-hash a partial it adopts. `IncomingOffers` re-plans if what the plan
                // counted on changed meanwhile.
                let result: Result<IncomingOffers.Plan, ReceiveError>
                do throws(ReceiveError) {
                    let importer: LibraryImporter
                    do throws(SyncError) { importer = try context.importer() } catch { throw ReceiveError.libraryUnavailable(error.description) }
                    let prepared = try await chunkWrites.plan(assets, known: known, with: importer)
                    // Closed meanwhile: nobody will write these; dropping them releases their locks.
                    guard closedReason == nil else { return }
                    for (hash, file) in prepared.value.files { partials[hash] = file }
                    result = .success(prepared.value.plan)
                } catch {
                    result = .failure(error)
                }
                await perform(incoming.planned(offerID: offerID, result))
            case let .send(messages):
                outbox += messages
                scheduleFlush()
            case let .verify(hash):
                enqueueVerify(hash)
            case let .install(order):
                enqueueInstall(order)
            case let .discard(hash):
                partials[hash] = nil
                if let file = staged.removeValue(forKey: hash) { try? file.discard() }
            case let .progress(pushID, progress):
                transfers[pushID]?.update { $0 = progress }
            case let .outcome(pushID, contentID, outcome):
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

    private func scheduleFlush() {
        guard !flushScheduled else { return }
        flushScheduled = true
        let previous = flushing
        flushing = Task {
            await previous?.value
            await self.flush()
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
        if !contents.isEmpty { await context.receivedAssets(contents, from: peer) }
        guard !messages.isEmpty else { return }
        if closedReason != nil {
            // `close()` is letting queued installs finish: the channel is still open, and the
            // peer waits for exactly these receipts.
            try? await channel.send(messages)
        } else {
            await sendOrClose(messages)
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
        let timeout = context.decisionTimeout, clock = context.clock
        Task {
            let accepted = await decision.wait(timeout: timeout, clock: clock)
            await self.decided(pushID: pushID, accepted: accepted, expired: decision.hasExpired)
        }
    }

    private func decided(pushID: UInt64, accepted: Bool, expired: Bool) async {
        guard closedReason == nil else { return }
        if !accepted { context.log(expired ? "offer from \(peer) expired unanswered" : "declined offer from \(peer)") }
        // The sender's person should know whether someone said no or nobody was there.
        let reason = expired ? "nobody answered in time" : "declined"
        await perform(incoming.decided(pushID: pushID, accepted: accepted, reason: reason))
    }

    // MARK: - Finishing and installing, off the actor

    private func enqueueVerify(_ hash: Hash256) {
        guard let file = partials.removeValue(forKey: hash) else {
            Task { await self.verified(hash, .failure(.partialTaken(fileHash: hash)), counted: false) }
            return
        }
        // The file is handed over: this actor does not touch it again.
        jobsInFlight += 1
        installs.verify(HandedOver(file)) { result in
            Task { await self.verified(hash, result, counted: true) }
        }
    }

    private func verified(_ hash: Hash256, _ result: Result<StagedFile, ReceiveError>, counted: Bool) async {
        if counted { jobDone() }
        if case let .success(file) = result {
            // The connection ended meanwhile: nobody will install it; give its chunks back to a later offer.
            guard closedReason == nil || !incoming.isIdle else {
                try? file.discard()
                return
            }
            staged[hash] = file
        }
        await perform(incoming.verified(hash, result.map { _ in () }))
    }

    private func enqueueInstall(_ order: IncomingOffers.InstallOrder) {
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
            Task { await self.installed(order, .failure(.libraryUnavailable(error.description)), counted: false) }
            return
        }
        jobsInFlight += 1
        // Queued now, in the order decided: one that copies a content runs before the one that takes it.
        installs.install(order, staged: sources, with: importer) { result in
            Task { await self.installed(order, result, counted: true) }
        }
    }

    private func installed(_ order: IncomingOffers.InstallOrder, _ result: Result<[InstalledFile], ReceiveError>, counted: Bool) async {
        if counted { jobDone() }
        await perform(incoming.installed(offerID: order.offerID, contentID: order.asset.contentID, result))
    }

    private func jobDone() {
        jobsInFlight -= 1
        let waiters = jobWaiters
        jobWaiters = []
        for waiter in waiters { waiter.resume() }
    }

    /// Stops reading the peer while too much waits for the disk (backpressure).
    private func waitForJobsToDrain(below limit: Int = PeerSession.maxQueuedJobs) async {
        while jobsInFlight >= limit || (jobsInFlight > 0 && chunkWrites.bytesQueued > Self.maxQueuedWriteBytes) {
            await withCheckedContinuation { jobWaiters.append($0) }
        }
    }

    // MARK: - Closing

    func close(reason: String) async {
        guard closedReason == nil else { return }
        closedReason = reason
        // What is already with the install queue lands (or fails) and is reported first.
        await waitForJobsToDrain(below: 1)
        let ended = outgoing.closeAll()
        for offerID in ended.awaitingReply { resumeReplyWaiter(offerID, .failure(.connectionFailed(reason))) }
        for offerID in ended.open { receiptStreams.removeValue(forKey: offerID)?.finish() }
        // Verified chunks stay in staging: the next offer of the same content resumes from them.
        await perform(incoming.closed(reason: reason))
        await flushing?.value
        await flush()
        for file in staged.values { try? file.discard() }
        staged = [:]
        partials = [:]
        for handle in transfers.values { handle.end() }
        transfers = [:]
        readAhead.stop()
        await channel.close()
        loop?.cancel()
        if let onClose {
            self.onClose = nil
            await onClose(self)
        }
    }
}

/// A value an actor hands to threads of its own (the write, verify, install
/// and read queues) without using it meanwhile: the actor only passes it
/// along, and the threads take turns — jobs on one serial queue run in
/// order, and a job for another queue is queued only once the earlier ones
/// have reported back — so no two threads use it at once.
struct HandedOver<Value>: @unchecked Sendable {
    let value: Value

    init(_ value: Value) {
        self.value = value
    }
}
