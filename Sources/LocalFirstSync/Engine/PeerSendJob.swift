/// Sends one offer to one peer: offer, wait for the answer, send exactly the
/// chunks it asked for, collect receipts, and keep that peer's ledger rows
/// honest at every step. A failure here touches only this peer.
struct PeerSendJob {
    let session: PeerSession
    let assets: [Asset]
    let offerID: UInt64
    let reader: BroadcastChunkReader
    let store: SyncStateStore
    let transfer: OutgoingTransfer
    let replyTimeout: Duration

    var peer: Peer { session.peer }

    static func allChunkKeys(of assets: [Asset]) -> [BroadcastChunkReader.Key] {
        assets.flatMap { asset in
            asset.files.enumerated().flatMap { fileIndex, file in
                file.manifest.chunks.indices.map { .init(contentID: asset.contentID, fileIndex: fileIndex, chunkIndex: $0) }
            }
        }
    }

    func run() async {
        let contents = assets.map(\.contentID)
        let byID = Dictionary(assets.map { ($0.contentID, $0) }, uniquingKeysWith: { first, _ in first })
        var progress = TransferProgress(assetsTotal: assets.count)
        var summary = PeerTransferSummary(peer: peer, state: .offering, assetsStored: 0, assetsFailed: 0, chunkBytesSent: 0, failures: [:])
        try? store.record(.inFlight, for: contents, peer: peer.ledgerKey)
        transfer.publish(TransferUpdate(peer: peer, progress: progress, state: .offering))

        let (receipts, receiptSink) = AsyncStream<WireMessage.Receipt>.makeStream()
        let reply = await session.offer(WireMessage.Offer(offerID: offerID, assets: assets), receipts: receiptSink, timeout: replyTimeout)
        let needed: [WireMessage.NeededChunks]
        switch reply {
        case let .failure(error):
            await end(&summary, contents: contents, state: .failed(reason: error.description), ledgerReason: error.description, progress: progress)
            return
        case let .success(answer) where !answer.accepted:
            let reason = answer.reason ?? "declined"
            await end(&summary, contents: contents, state: .declined(reason: reason), ledgerReason: "declined by \(peer.name): \(reason)", progress: progress)
            return
        case let .success(answer):
            needed = answer.needed
        }

        // Plan: exactly the chunks the peer asked for, validated against what we offered.
        var plan: [(key: BroadcastChunkReader.Key, file: FileManifest, offset: UInt64)] = []
        for entry in needed {
            guard let asset = byID[entry.contentID] else { continue }
            for file in entry.files where Int(file.fileIndex) < asset.files.count {
                let manifest = asset.files[Int(file.fileIndex)].manifest
                let offsets = manifest.chunks.reduce(into: [UInt64(0)]) { $0.append($0[$0.count - 1] + UInt64($1.length)) }
                for index in file.chunks where Int(index) < manifest.chunks.count {
                    plan.append((.init(contentID: entry.contentID, fileIndex: Int(file.fileIndex), chunkIndex: Int(index)), manifest, offsets[Int(index)]))
                    progress.bytesTotal += UInt64(manifest.chunks[Int(index)].length)
                }
            }
        }
        let planned = Set(plan.map(\.key))
        await reader.abandon(Self.allChunkKeys(of: assets).filter { !planned.contains($0) })
        transfer.publish(TransferUpdate(peer: peer, progress: progress, state: .transferring))

        var locallyFailed: [ContentID: String] = [:]
        var cut: String?
        // One chunk ahead: the next chunk is read and verified (on the reader's
        // actor) while this one is encrypted and sent (on the channel's), so the
        // two halves of the work run on both cores.
        // A chunk of an asset that already failed locally is not read at all: `nil`, and its
        // demand is given back at once.
        func start(_ position: Int) async -> Task<Result<ChunkPayload, BroadcastChunkReader.Failure>, Never>? {
            let item = plan[position]
            guard locallyFailed[item.key.contentID] == nil else {
                await reader.abandon([item.key])
                return nil
            }
            return fetch(item.key, file: item.file, offset: item.offset)
        }
        var upcoming = plan.isEmpty ? nil : await start(0)
        for (position, item) in plan.enumerated() {
            let current = upcoming
            upcoming = position + 1 < plan.count ? await start(position + 1) : nil
            guard let current else { continue }
            let fetched = await current.value
            if locallyFailed[item.key.contentID] != nil { continue }  // the reader released it already
            let payload: ChunkPayload
            switch fetched {
            case let .success(fetchedPayload):
                payload = fetchedPayload
            case let .failure(error):
                locallyFailed[item.key.contentID] = switch error {
                case let .sourceChanged(path): "\(path) changed while being sent"
                case let .unreadable(path, why): "cannot read \(path): \(why)"
                }
                continue
            }
            do {
                try await session.send([.chunk(.init(
                    offerID: offerID, contentID: item.key.contentID, fileIndex: UInt16(item.key.fileIndex),
                    chunkIndex: UInt32(item.key.chunkIndex), payload: payload))])
            } catch {
                cut = error.description
                // The one being fetched releases itself; the rest were never asked for.
                await reader.abandon(plan.dropFirst(position + 2).map(\.key))
                break
            }
            summary.chunkBytesSent += UInt64(payload.encodedLength)
            progress.bytesDone += UInt64(item.file.chunks[item.key.chunkIndex].length)
            transfer.publish(TransferUpdate(peer: peer, progress: progress, state: .transferring))
        }
        if !locallyFailed.isEmpty, cut == nil {
            // Nothing more will come for those assets: let the peer stop waiting for them.
            try? await session.send([.cancel(.init(offerID: offerID, reason: "some assets changed while being sent"))])
        }

        // Receipts: only a peer's confirmation makes a row `synced`.
        var outstanding = Set(contents).subtracting(locallyFailed.keys)
        // `synced` rows are written in batches: a burst of receipts (a repeat push
        // confirms everything at once) costs one commit instead of one per asset.
        // A row not yet written stays `inFlight`, so a crash only means offering it again.
        var confirmed: [(content: ContentID, bytes: UInt64)] = []
        var lastCommit = ContinuousClock.now
        func commitConfirmed() {
            try? store.recordSynced(confirmed, peer: peer.ledgerKey)
            confirmed.removeAll(keepingCapacity: true)
            lastCommit = .now
        }
        if cut == nil {
            for await receipt in receipts where outstanding.contains(receipt.contentID) {
                outstanding.remove(receipt.contentID)
                switch receipt.outcome {
                case .stored:
                    confirmed.append((receipt.contentID, byID[receipt.contentID]?.totalSize ?? 0))
                    if confirmed.count >= 512 || ContinuousClock.now - lastCommit > .seconds(1) { commitConfirmed() }
                    summary.assetsStored += 1
                case let .failed(reason):
                    try? store.record(.failed, for: [receipt.contentID], peer: peer.ledgerKey, reason: reason)
                    summary.failures[receipt.contentID] = reason
                }
                progress.assetsDone += 1
                transfer.publish(TransferUpdate(peer: peer, progress: progress, state: .transferring))
                if outstanding.isEmpty { break }
            }
        }
        commitConfirmed()
        await session.finishOutgoing(offerID)
        for (content, reason) in locallyFailed {
            try? store.record(.failed, for: [content], peer: peer.ledgerKey, reason: reason)
            summary.failures[content] = reason
        }
        let lost = cut ?? "connection closed before the peer confirmed"
        for content in outstanding {
            try? store.record(.failed, for: [content], peer: peer.ledgerKey, reason: lost)
            summary.failures[content] = lost
        }
        summary.assetsFailed = summary.failures.count
        summary.state = summary.failures.isEmpty ? .completed : .failed(reason: summary.failures.values.sorted().first ?? lost)
        transfer.publish(TransferUpdate(peer: peer, progress: progress, state: summary.state))
        transfer.finish(summary)
    }

    private func fetch(_ key: BroadcastChunkReader.Key, file: FileManifest, offset: UInt64) -> Task<Result<ChunkPayload, BroadcastChunkReader.Failure>, Never> {
        let reader = self.reader
        return Task {
            do throws(BroadcastChunkReader.Failure) {
                return .success(try await reader.payload(for: key, file: file, chunkOffset: offset))
            } catch {
                return .failure(error)
            }
        }
    }

    private func end(_ summary: inout PeerTransferSummary, contents: [ContentID], state: TransferState, ledgerReason: String, progress: TransferProgress) async {
        try? store.record(.failed, for: contents, peer: peer.ledgerKey, reason: ledgerReason)
        await reader.abandon(Self.allChunkKeys(of: assets))
        await session.finishOutgoing(offerID)
        summary.state = state
        summary.assetsFailed = contents.count
        transfer.publish(TransferUpdate(peer: peer, progress: progress, state: state))
        transfer.finish(summary)
    }
}
