import Foundation

/// One connected peer: its secure channel, the offers in flight both ways,
/// and the single loop that consumes everything the peer sends.
///
/// Every message from the peer is handled here, in order, on this actor, so
/// interleavings across several peers cannot corrupt per-peer state; the
/// owning `LocalSync` only routes.
actor PeerSession {
    let peer: Peer
    let channel: SecureChannel
    private let context: SessionContext
    private var outgoing: [UInt64: OutgoingOffer] = [:]
    private var receiving: [UInt64: ReceivingOffer] = [:]
    /// Assets that failed here (disk full...) while their chunks were still on
    /// the way: what the sender had already sent is dropped, not a protocol
    /// violation. Keyed by offer and content; a few per connection at most.
    private var abandoned: Set<AbandonedAsset> = []
    private var loop: Task<Void, Never>?
    private var closedReason: String?
    private var onClose: (@Sendable (PeerSession) async -> Void)?
    private let decompressor = ZstdDecompressor()
    /// Decrypts the next chunks while this actor verifies and writes the current one.
    private let incoming: ChannelReadAhead
    /// While set, receipts and ledger rows of completed assets wait here, to
    /// leave as one message batch and one commit (see `releaseHeld`). Set only
    /// around the synchronous loop that confirms assets a receiver already has.
    private var held: (receipts: [WireMessage], received: [(content: ContentID, bytes: UInt64)])?
    /// Completed assets being finished and installed off this actor (see `complete`).
    private let installs = AssetInstallQueue()
    private var installsInFlight = 0
    private var installSlotWaiters: [CheckedContinuation<Void, Never>] = []
    private static let maxQueuedInstalls = 4

    init(peer: Peer, channel: SecureChannel, context: SessionContext) {
        self.peer = peer
        self.channel = channel
        self.context = context
        incoming = ChannelReadAhead(channel: channel)
    }

    func start(onClose: @escaping @Sendable (PeerSession) async -> Void) {
        self.onClose = onClose
        incoming.start()
        loop = Task { await self.run() }
    }

    var isOpen: Bool { closedReason == nil }

    // MARK: - Sending side

    /// Sends an offer and waits for the peer's answer (which may take as long as its user does).
    func offer(_ offer: WireMessage.Offer, receipts: AsyncStream<WireMessage.Receipt>.Continuation, timeout: Duration) async -> Result<WireMessage.OfferReply, SyncError> {
        if let closedReason {
            receipts.finish()
            return .failure(.connectionFailed(closedReason))
        }
        let offerID = offer.offerID
        let timer = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            if !Task.isCancelled { await self?.resolveReply(offerID, .failure(.declined(reason: "the peer did not answer the offer in time"))) }
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { continuation in
            outgoing[offerID] = OutgoingOffer(reply: continuation, receipts: receipts)
            Task { await self.sendOrClose([.offer(offer)]) }
        }
    }

    func send(_ messages: [WireMessage]) async throws(SyncError) {
        if let closedReason { throw .connectionFailed(closedReason) }
        do { try await channel.send(messages) } catch {
            await close(reason: error.description)
            throw .connectionFailed(error.description)
        }
    }

    func finishOutgoing(_ offerID: UInt64) {
        outgoing.removeValue(forKey: offerID)?.receipts.finish()
    }

    private func sendOrClose(_ messages: [WireMessage]) async {
        do { try await send(messages) } catch {}
    }

    private func resolveReply(_ offerID: UInt64, _ result: Result<WireMessage.OfferReply, SyncError>) {
        guard let continuation = outgoing[offerID]?.reply else { return }
        outgoing[offerID]?.reply = nil
        continuation.resume(returning: result)
        if case .failure = result { finishOutgoing(offerID) }
    }

    // MARK: - The loop

    private func run() async {
        while true {
            let received: ChannelReadAhead.Incoming?
            do { received = try await incoming.next().get() } catch {
                if case .transport(.timedOut(.idle)) = error {
                    // Quiet is fine (a person may be deciding); a ping proves the peer is still there.
                    await sendOrClose([.ping(.init(nonce: UInt64.random(in: 0...UInt64.max)))])
                    continue
                }
                // A frame or message that breaks the protocol is named to the peer before we hang up
                // (the stream can't be trusted past it, but our sending half still works). Anything
                // below that (decryption, the socket) leaves nothing to say.
                if let reply = Self.errorReply(for: error) {
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
            // Closed while we waited (by the owner, or a replacement connection): what is still
            // buffered belongs to a session that no longer exists.
            guard closedReason == nil else { return }
            do throws(SyncError) {
                try await handle(received.message)
            } catch {
                // A peer that breaks the protocol is told why, then dropped.
                context.log("dropped \(peer): \(error)")
                try? await channel.send(.error(.init(code: .unexpectedMessage, message: WireText.fitted(error.description, maxBytes: 1000))))
                await close(reason: error.description)
                return
            }
        }
    }

    private static func errorReply(for error: SecureChannelError) -> WireMessage.ErrorMessage? {
        switch error {
        case let .wire(wireError):
            WireMessage.ErrorMessage(for: wireError)
        case let .frame(frameError):
            WireMessage.ErrorMessage(code: .limitExceeded, message: WireText.fitted(frameError.description, maxBytes: WireMessage.ErrorMessage.maxMessageBytes))
        default:
            nil
        }
    }

    private func handle(_ message: WireMessage) async throws(SyncError) {
        switch message {
        case let .offer(offer):
            try await received(offer)
        case let .offerReply(reply):
            guard outgoing[reply.offerID]?.reply != nil else { throw .protocolViolation("reply to unknown offer \(reply.offerID)") }
            resolveReply(reply.offerID, .success(reply))
        case let .chunk(chunk):
            try await received(chunk)
        case let .receipt(receipt):
            guard let offer = outgoing[receipt.offerID] else { throw .protocolViolation("receipt for unknown offer \(receipt.offerID)") }
            offer.receipts.yield(receipt)
        case let .cancel(cancel):
            cancelled(cancel)
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

    private func received(_ offer: WireMessage.Offer) async throws(SyncError) {
        guard receiving[offer.offerID] == nil else { throw .protocolViolation("offer \(offer.offerID) sent twice") }
        let handle = ReceiveSessionHandle()
        let decision = OneShotDecision()
        // Hostile names are refused before anyone is asked.
        if let rejection = context.rejection(of: offer) {
            try await send([.offerReply(.init(offerID: offer.offerID, accepted: false, reason: WireText.fitted(rejection, maxBytes: 256)))])
            context.log("refused offer from \(peer): \(rejection)")
            return
        }
        receiving[offer.offerID] = ReceivingOffer(offerID: offer.offerID, phase: .awaitingDecision, handle: handle)
        let auto = context.trust.acceptsOffers(from: peer.deviceID)
        if auto { decision.decide(true) }
        let total = offer.assets.reduce(UInt64(0)) { $0 + $1.totalSize }
        context.announce(IncomingTransfer(
            from: peer, offerID: offer.offerID, items: offer.assets, totalByteCount: total,
            acceptedAutomatically: auto, decision: decision, session: handle))
        let timeout = context.decisionTimeout
        Task {
            let accepted = await decision.wait(timeout: timeout)
            await self.decided(offer, accepted: accepted)
        }
    }

    private func decided(_ offer: WireMessage.Offer, accepted: Bool) async {
        guard var state = receiving[offer.offerID], state.phase == .awaitingDecision else { return }
        guard accepted else {
            receiving[offer.offerID] = nil
            state.handle.finish()
            await sendOrClose([.offerReply(.init(offerID: offer.offerID, accepted: false, reason: "declined"))])
            return
        }
        let plan: ReceivePlan
        do {
            plan = try context.importer().plan(offer.assets)
        } catch {
            receiving[offer.offerID] = nil
            state.handle.finish()
            context.log("declined offer from \(peer): \(error)")
            await sendOrClose([.offerReply(.init(offerID: offer.offerID, accepted: false, reason: WireText.fitted("\(error)", maxBytes: 256)))])
            return
        }
        state.phase = .receiving
        var needed: [WireMessage.NeededChunks] = []
        var neededBytes: UInt64 = 0
        for item in plan.assets {
            let missing = item.missing
            state.assets[item.asset.contentID] = ReceivingOffer.AssetState(asset: item.asset, files: item.files, missing: missing)
            state.pendingAssets.insert(item.asset.contentID)
            let files = missing.keys.sorted().compactMap { index -> WireMessage.NeededChunks.File? in
                guard let chunks = missing[index], !chunks.isEmpty else { return nil }
                neededBytes += chunks.reduce(UInt64(0)) { $0 + UInt64(item.asset.files[index].manifest.chunks[$1].length) }
                return .init(fileIndex: UInt16(index), chunks: ChunkIndexSet(chunks.map { UInt32($0) }))
            }
            if !files.isEmpty { needed.append(.init(contentID: item.asset.contentID, files: files)) }
        }
        state.handle.update {
            $0.bytesTotal = neededBytes
            $0.assetsTotal = offer.assets.count
        }
        receiving[offer.offerID] = state.pendingAssets.isEmpty ? nil : state
        await sendOrClose([.offerReply(.init(offerID: offer.offerID, accepted: true, needed: needed))])
        if state.pendingAssets.isEmpty { state.handle.finish() }
        // Assets we already had entirely land (or are confirmed) at once, in one batch.
        held = ([], [])
        for item in plan.assets where item.missing.values.allSatisfy(\.isEmpty) {
            await complete(offerID: offer.offerID, contentID: item.asset.contentID)
        }
        await releaseHeld()
    }

    private func received(_ chunk: WireMessage.Chunk) async throws(SyncError) {
        if abandoned.contains(AbandonedAsset(offerID: chunk.offerID, contentID: chunk.contentID)) { return }
        // Consent: bytes for an offer nobody accepted are a violation, and end the connection.
        guard var state = receiving[chunk.offerID], state.phase == .receiving else {
            throw .protocolViolation("chunk for offer \(chunk.offerID), which was not accepted")
        }
        let fileIndex = Int(chunk.fileIndex), chunkIndex = Int(chunk.chunkIndex)
        guard var asset = state.assets[chunk.contentID], asset.missing[fileIndex]?.contains(chunkIndex) == true else {
            throw .protocolViolation("chunk \(chunkIndex) of file \(fileIndex) was not requested")
        }
        let expectedLength = Int(asset.asset.files[fileIndex].manifest.chunks[chunkIndex].length)
        guard chunk.payload.decodedLength == expectedLength else {
            throw .protocolViolation("chunk \(chunkIndex) declares \(chunk.payload.decodedLength) bytes, the manifest says \(expectedLength)")
        }
        let bytes: ArraySlice<UInt8>
        do { bytes = try chunk.payload.decoded(using: decompressor) } catch { throw .protocolViolation("chunk \(chunkIndex): \(error)") }
        do throws(ReceiveError) {
            guard let file = asset.files[fileIndex] else { throw .chunkIndexOutOfRange(index: chunkIndex, chunkCount: 0) }
            try file.writeReceived(chunkAt: chunkIndex, bytes: bytes)
        } catch {
            // Local trouble (disk full...), or bytes that don't match their hash (checked here
            // when the partial is shared or resumed, by the file hash otherwise): this asset
            // fails, the connection survives, and chunks of it already in flight are dropped
            // when they arrive.
            abandoned.insert(AbandonedAsset(offerID: chunk.offerID, contentID: chunk.contentID))
            asset.missing = [:]
            state.assets[chunk.contentID] = asset
            receiving[chunk.offerID] = state
            await fail(offerID: chunk.offerID, contentID: chunk.contentID, reason: error.description)
            return
        }
        asset.missing[fileIndex]?.remove(chunkIndex)
        state.assets[chunk.contentID] = asset
        receiving[chunk.offerID] = state
        state.handle.update { $0.bytesDone += UInt64(bytes.count) }
        if asset.remainingCount == 0 {
            await complete(offerID: chunk.offerID, contentID: chunk.contentID)
        }
    }

    /// All chunks of an asset are staged: verify, land it whole, and say so.
    ///
    /// Files to finish (verify, fsync, rename) go to the install queue, so the
    /// next asset's chunks keep coming while the disk catches up; assets that
    /// were already in place are confirmed at once.
    private func complete(offerID: UInt64, contentID: ContentID) async {
        guard var state = receiving[offerID], let asset = state.assets[contentID] else { return }
        let importer: LibraryImporter
        do { importer = try context.importer() } catch {
            await fail(offerID: offerID, contentID: contentID, reason: "\(error)")
            return
        }
        guard held == nil, asset.files.contains(where: { $0 != nil }) else {
            let outcome = Result { () throws(ReceiveError) in try importer.install(asset.asset, files: asset.files) }
            await installed(offerID: offerID, contentID: contentID, bytes: asset.asset.totalSize, outcome)
            return
        }
        // The files are handed over: this actor must not touch them again.
        state.assets[contentID]?.files = []
        state.installing.insert(contentID)
        receiving[offerID] = state
        await waitForInstallSlot()
        // Closed while we waited for a slot: `close()` has reported this asset already, and
        // its partials stay in staging for the next offer.
        guard closedReason == nil else { return }
        installsInFlight += 1
        let finishing = FinishingAsset(asset: asset.asset, files: asset.files)
        Task { [installs] in
            let outcome = await installs.install(finishing, with: importer)
            await self.installed(offerID: offerID, contentID: contentID, bytes: asset.asset.totalSize, outcome, queued: true)
        }
    }

    private func installed(
        offerID: UInt64, contentID: ContentID, bytes: UInt64, _ outcome: Result<[InstalledFile], ReceiveError>, queued: Bool = false
    ) async {
        if queued {
            receiving[offerID]?.installing.remove(contentID)
            installsInFlight -= 1
            // Everyone waiting re-checks: the session for a slot, `close()` for none in flight.
            let waiters = installSlotWaiters
            installSlotWaiters = []
            for waiter in waiters { waiter.resume() }
        }
        switch outcome {
        case let .success(files):
            receiving[offerID]?.handle.record(.stored(files), for: contentID)
            if held != nil {
                held?.received.append((contentID, bytes))
            } else {
                context.receivedAssets([(contentID, bytes)], from: peer)
            }
            await finishAsset(offerID: offerID, contentID: contentID, receipt: .stored)
        case let .failure(error):
            await fail(offerID: offerID, contentID: contentID, reason: "\(error)")
        }
    }

    /// At most `maxQueuedInstalls` assets wait for the disk: beyond that a slow
    /// disk slows the peer down (the session stops reading), and each waiting
    /// asset holds only its open partial files.
    private func waitForInstallSlot() async {
        while installsInFlight >= Self.maxQueuedInstalls {
            await withCheckedContinuation { installSlotWaiters.append($0) }
        }
    }

    private func fail(offerID: UInt64, contentID: ContentID, reason: String) async {
        receiving[offerID]?.handle.record(.failed(reason: reason), for: contentID)
        context.log("failed to receive \(contentID.hash.shortHex) from \(peer): \(reason)")
        await finishAsset(offerID: offerID, contentID: contentID, receipt: .failed(reason: WireText.fitted(reason, maxBytes: 256)))
    }

    private func finishAsset(offerID: UInt64, contentID: ContentID, receipt: WireMessage.Receipt.Outcome) async {
        guard var state = receiving[offerID], state.pendingAssets.remove(contentID) != nil else { return }
        state.assets[contentID] = nil
        state.handle.update { $0.assetsDone += 1 }
        receiving[offerID] = state.pendingAssets.isEmpty ? nil : state
        if state.pendingAssets.isEmpty { state.handle.finish() }
        let message = WireMessage.receipt(.init(offerID: offerID, contentID: contentID, outcome: receipt))
        if held != nil {
            held?.receipts.append(message)
        } else if closedReason != nil {
            // `close()` is letting queued installs finish: the channel is still open, and the
            // peer waits for exactly this receipt.
            try? await channel.send([message])
        } else {
            await sendOrClose([message])
        }
    }

    /// Sends the held receipts together and records the held ledger rows in one commit.
    private func releaseHeld() async {
        guard let batch = held else { return }
        held = nil
        context.receivedAssets(batch.received, from: peer)
        if !batch.receipts.isEmpty { await sendOrClose(batch.receipts) }
    }

    /// The sender gave up on what it has not sent; assets that arrived whole
    /// and are being installed still land and get their receipts.
    private func cancelled(_ cancel: WireMessage.Cancel) {
        guard var state = receiving[cancel.offerID] else { return }
        for contentID in state.pendingAssets.subtracting(state.installing) {
            state.handle.record(.failed(reason: "sender cancelled: \(cancel.reason)"), for: contentID)
            state.pendingAssets.remove(contentID)
            state.assets[contentID] = nil
        }
        if state.pendingAssets.isEmpty {
            receiving[cancel.offerID] = nil
            state.handle.finish()
        } else {
            receiving[cancel.offerID] = state
        }
    }

    // MARK: - Closing

    func close(reason: String) async {
        guard closedReason == nil else { return }
        closedReason = reason
        // Assets already handed to the install queue land (or fail) and are reported first.
        while installsInFlight > 0 {
            await withCheckedContinuation { installSlotWaiters.append($0) }
        }
        for (offerID, offer) in outgoing {
            offer.reply?.resume(returning: .failure(.connectionFailed(reason)))
            offer.receipts.finish()
            outgoing[offerID] = nil
        }
        for (_, state) in receiving {
            // Verified chunks stay in staging: the next offer of the same content resumes from them.
            for contentID in state.pendingAssets {
                state.handle.record(.failed(reason: "connection lost: \(reason)"), for: contentID)
            }
            state.handle.finish()
        }
        receiving.removeAll()
        incoming.stop()
        await channel.close()
        loop?.cancel()
        if let onClose {
            self.onClose = nil
            await onClose(self)
        }
    }
}

/// An asset of an offer that this receiver gave up on locally.
private struct AbandonedAsset: Hashable {
    let offerID: UInt64
    let contentID: ContentID
}
