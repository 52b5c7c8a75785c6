/// What a session remembers about an offer it sent: who waits for the
/// reply, where receipts go, and how many may still come (one per asset: a
/// peer sending more is breaking the protocol, and must not grow the stream).
struct OutgoingOffer {
    var reply: CheckedContinuation<Result<WireMessage.OfferReply, SyncError>, Never>?
    let receipts: AsyncStream<WireMessage.Receipt>.Continuation
    var receiptsOwed: Int
}
