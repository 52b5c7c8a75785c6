import LFSyncWire

/// The sending side of one connection: which of our offers the peer may still
/// answer, how many Receipts each may still get, and what a late answer means.
///
/// A value type that decides and does no I/O, the mirror of `IncomingOffers`:
/// `SessionSender` tells it what happened and does what it answers (resume a
/// waiter, pass a Receipt on, send Cancel, drop the peer), so these rules are
/// tested without sockets (`OutgoingOffersTests`).
struct OutgoingOffers {
    /// Offers sent and not yet given up by their sender, with the Receipts still owed
    /// (one per asset: a peer sending more is breaking the protocol, and must not
    /// grow the stream).
    private var receiptsOwed: [UInt64: Int] = [:]
    /// Offers whose reply is still awaited.
    private var awaitingReply = Set<UInt64>()
    /// Offers whose reply did not come in time: only these may still get a (late) reply.
    private var expired = Set<UInt64>()
    /// Offers the sender gave up on: a late reply or receipt is ignored, not a violation.
    /// An offer ID is never reused on a connection, so this is also how reuse is refused.
    private var retired = Set<UInt64>()
    /// Retired offers whose every Receipt had come.
    private var completed = Set<UInt64>()

    /// What to do with a reply from the peer.
    enum ReplyVerdict: Equatable {
        /// Hand it to the sender, who is waiting for it.
        case deliver
        /// It came after the sender stopped waiting and says yes: tell the peer nothing
        /// will be sent for it (PROTOCOL.md, "Limits and deadlines").
        case cancelLateAcceptance
        /// Nobody needs it any more.
        case ignore
    }

    /// Records an offer about to be sent; false when its ID was already used on this connection.
    mutating func sending(_ offerID: UInt64, assetCount: Int) -> Bool {
        guard receiptsOwed[offerID] == nil, !retired.contains(offerID) else { return false }
        receiptsOwed[offerID] = assetCount
        awaitingReply.insert(offerID)
        return true
    }

    /// The reply will never come from here on (the offer could not be sent); true
    /// when its waiter is still to be told.
    mutating func replyAbandoned(_ offerID: UInt64) -> Bool {
        awaitingReply.remove(offerID) != nil
    }

    /// The wait for the reply ran out; true when its waiter is still to be told.
    mutating func replyTimedOut(_ offerID: UInt64) -> Bool {
        guard awaitingReply.remove(offerID) != nil else { return false }
        expired.insert(offerID)
        return true
    }

    mutating func replyArrived(_ reply: WireMessage.OfferReply) throws(SyncError) -> ReplyVerdict {
        if expired.remove(reply.offerID) != nil {
            return reply.accepted ? .cancelLateAcceptance : .ignore
        }
        if retired.contains(reply.offerID) { return .ignore }
        guard awaitingReply.remove(reply.offerID) != nil else {
            throw .protocolViolation("reply to unknown offer \(reply.offerID)")
        }
        return .deliver
    }

    /// True when the Receipt is to be passed to the offer's sender.
    mutating func receiptArrived(for offerID: UInt64) throws(SyncError) -> Bool {
        // Every Receipt of a retired offer that had all its Receipts is one too many (the
        // Error table's "more Receipts than assets"); one given up early may still see stragglers.
        if completed.contains(offerID) { throw .protocolViolation("more receipts than assets for offer \(offerID)") }
        if retired.contains(offerID) { return false }
        guard let owed = receiptsOwed[offerID] else { throw .protocolViolation("receipt for unknown offer \(offerID)") }
        guard owed > 0 else { throw .protocolViolation("more receipts than assets for offer \(offerID)") }
        receiptsOwed[offerID] = owed - 1
        return true
    }

    /// The sender is done with these offers; returns those that were still open, whose
    /// Receipt streams end now.
    mutating func retire(_ offerIDs: [UInt64]) -> [UInt64] {
        var ended: [UInt64] = []
        for offerID in offerIDs {
            guard let owed = receiptsOwed.removeValue(forKey: offerID) else { continue }
            if owed == 0 { completed.insert(offerID) }
            awaitingReply.remove(offerID)
            retired.insert(offerID)
            ended.append(offerID)
        }
        return ended
    }

    /// The connection ended: every open offer ends with it. Returns the offers whose
    /// reply was still awaited and those whose Receipt streams end.
    mutating func closeAll() -> (awaitingReply: [UInt64], open: [UInt64]) {
        let result = (Array(awaitingReply), Array(receiptsOwed.keys))
        retired.formUnion(receiptsOwed.keys)
        receiptsOwed = [:]
        awaitingReply = []
        expired = []
        return result
    }
}
