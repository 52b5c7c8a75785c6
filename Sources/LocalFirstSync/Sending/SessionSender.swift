import LFSyncSystem
import LFSyncWire

/// The outgoing side of one connection: the offers we made to this peer,
/// the tasks waiting for their replies, and where their receipts go.
///
/// `OutgoingOffers` decides (which reply or receipt is expected, late or
/// unknown); this actor keeps the waiters and streams those decisions feed.
/// Every peer's `PeerSendJob` talks to the side of its own connection; the
/// session's loop hands it the replies and receipts the peer sends.
actor SessionSender {
    private let clock: any Clock<Duration>
    private var offers = OutgoingOffers()
    private var replies: [UInt64: Eventual<Result<WireMessage.OfferReply, SyncError>>] = [:]
    private var receiptStreams: [UInt64: AsyncStream<WireMessage.Receipt>.Continuation] = [:]
    private var closedReason: String?
    /// The session this side belongs to and sends through; it owns this side, hence weak.
    private weak var session: PeerSession?

    init(clock: any Clock<Duration>) {
        self.clock = clock
    }

    func attach(to session: PeerSession) {
        self.session = session
    }

    /// Sends an offer and waits for the peer's answer (which may take as long
    /// as its user does). Its receipts go to `receipts`, which the caller
    /// finishes; this side finishes it too when the connection ends.
    func offer(_ offer: WireMessage.Offer, receipts: AsyncStream<WireMessage.Receipt>.Continuation, timeout: Duration) async -> Result<WireMessage.OfferReply, SyncError> {
        if let closedReason {
            receipts.finish()
            return .failure(.connectionFailed(closedReason))
        }
        let offerID = offer.offerID
        guard offers.sending(offerID, assetCount: offer.assets.count) else {
            return .failure(.localFailure("offer \(offerID) was already sent on this connection"))
        }
        receiptStreams[offerID] = receipts
        let reply = Eventual<Result<WireMessage.OfferReply, SyncError>>()
        replies[offerID] = reply
        let timer = Deadline.after(timeout, on: clock) { [weak self] in
            await self?.expire(offerID)
        }
        defer { timer.cancel() }
        // The reply can come (and resolve `reply`) while the offer is still being sent.
        do throws(SyncError) {
            guard let session else { throw SyncError.connectionFailed("the connection is gone") }
            try await session.send([.offer(offer)])
        } catch {
            // Our own encoding failure fails this offer alone; a lost connection fails every one.
            if offers.replyAbandoned(offerID) { resolve(offerID, .failure(error)) }
        }
        if let result = await reply.waitUnlessCancelled() { return result }
        // The sender stopped waiting (its job was cancelled): a "yes" that comes later is
        // answered with a Cancel, as one after the deadline is.
        if offers.replyTimedOut(offerID) { replies.removeValue(forKey: offerID) }
        return .failure(.cancelled)
    }

    /// The sender is done with these offers: later replies and receipts for them are dropped.
    func retire(_ offerIDs: [UInt64]) {
        for offerID in offers.retire(offerIDs) {
            receiptStreams.removeValue(forKey: offerID)
        }
    }

    /// A reply from the peer, handed over by the session's loop. Throws when
    /// the peer answers an offer it was never made.
    func replyArrived(_ reply: WireMessage.OfferReply) async throws(SyncError) {
        switch try offers.replyArrived(reply) {
        case .deliver:
            resolve(reply.offerID, .success(reply))
        case .cancelLateAcceptance:
            try await session?.send([.cancel(.init(offerID: reply.offerID, reason: "the answer came after the sender stopped waiting for it"))])
        case .ignore:
            break
        }
    }

    /// A receipt from the peer, handed over by the session's loop.
    func receiptArrived(_ receipt: WireMessage.Receipt) throws(SyncError) {
        if try offers.receiptArrived(for: receipt.offerID) {
            receiptStreams[receipt.offerID]?.yield(receipt)
        }
    }

    /// The connection ended: every offer still waiting fails, every receipt stream ends.
    func close(reason: String) {
        guard closedReason == nil else { return }
        closedReason = reason
        let ended = offers.closeAll()
        for offerID in ended.awaitingReply { resolve(offerID, .failure(.connectionFailed(reason))) }
        for offerID in ended.open { receiptStreams.removeValue(forKey: offerID)?.finish() }
    }

    private func expire(_ offerID: UInt64) {
        guard offers.replyTimedOut(offerID) else { return }
        resolve(offerID, .failure(.timedOut("the peer did not answer the offer in time")))
    }

    private func resolve(_ offerID: UInt64, _ result: Result<WireMessage.OfferReply, SyncError>) {
        replies.removeValue(forKey: offerID)?.resolve(result)
    }
}
