/// What a session remembers about an offer it sent: who waits for the
/// reply, and where receipts go.
struct OutgoingOffer {
    var reply: CheckedContinuation<Result<WireMessage.OfferReply, SyncError>, Never>?
    let receipts: AsyncStream<WireMessage.Receipt>.Continuation
}
