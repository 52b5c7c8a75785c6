import Testing
@testable import LocalFirstSync
@testable import LFSyncWire

/// The sending side's rules, event by event without a socket: one reply per
/// offer, one Receipt per asset, a late "yes" answered with Cancel, offer IDs
/// never reused, and everything open ending with the connection.
@Suite struct OutgoingOffersTests {
    /// `#expect` takes a call apart and evaluates its receiver as a constant, so the
    /// mutating state machine is driven through this reference.
    private final class Offers {
        var state = OutgoingOffers()
        func sending(_ id: UInt64, assetCount: Int) -> Bool { state.sending(id, assetCount: assetCount) }
        func replyAbandoned(_ id: UInt64) -> Bool { state.replyAbandoned(id) }
        func replyTimedOut(_ id: UInt64) -> Bool { state.replyTimedOut(id) }
        func replyArrived(_ reply: WireMessage.OfferReply) throws -> OutgoingOffers.ReplyVerdict { try state.replyArrived(reply) }
        func receiptArrived(for id: UInt64) throws -> Bool { try state.receiptArrived(for: id) }
        func retire(_ ids: [UInt64]) -> [UInt64] { state.retire(ids) }
        func closeAll() -> (awaitingReply: [UInt64], open: [UInt64]) { state.closeAll() }
    }

    private func reply(_ offerID: UInt64, _ decision: WireMessage.OfferReply.Decision = .accepted) -> WireMessage.OfferReply {
        WireMessage.OfferReply(offerID: offerID, decision: decision)
    }

    private func isViolation(_ body: () throws -> Void) -> Bool {
        do { try body() } catch {
            if case .protocolViolation = error as? SyncError { return true }
        }
        return false
    }

    @Test func aReplyIsDeliveredOnceAndASecondIsAViolation() throws {
        let offers = Offers()
        #expect(offers.sending(1, assetCount: 2))
        #expect(try offers.replyArrived(reply(1)) == .deliver)
        #expect(isViolation { _ = try offers.replyArrived(reply(1)) })
    }

    /// Conformance: during a Pull the server retires its offers once every Receipt came; one
    /// Receipt more is still "more Receipts than assets" (Error 3), not silently ignored.
    /// An offer given up before its Receipts came still takes stragglers quietly.
    @Test func aReceiptAfterEveryReceiptCameIsAViolationEvenOnceRetired() throws {
        let offers = Offers()
        #expect(offers.sending(1, assetCount: 2))
        #expect(try offers.replyArrived(reply(1)) == .deliver)
        #expect(try offers.receiptArrived(for: 1))
        #expect(try offers.receiptArrived(for: 1))
        #expect(offers.retire([1]) == [1])
        #expect(isViolation { _ = try offers.receiptArrived(for: 1) })

        #expect(offers.sending(2, assetCount: 2))
        #expect(try offers.replyArrived(reply(2)) == .deliver)
        #expect(try offers.receiptArrived(for: 2))
        #expect(offers.retire([2]) == [2])
        #expect(try offers.receiptArrived(for: 2) == false, "a straggler of an offer given up early is ignored")
    }

    @Test func aReplyToAnOfferNeverSentIsAViolation() {
        let offers = Offers()
        #expect(isViolation { _ = try offers.replyArrived(reply(7)) })
        #expect(isViolation { _ = try offers.receiptArrived(for: 7) })
    }

    @Test func receiptsAreCountedPerAsset() throws {
        let offers = Offers()
        #expect(offers.sending(1, assetCount: 2))
        _ = try offers.replyArrived(reply(1))
        #expect(try offers.receiptArrived(for: 1))
        #expect(try offers.receiptArrived(for: 1))
        #expect(isViolation { _ = try offers.receiptArrived(for: 1) })
    }

    @Test func anOfferIDIsNeverReusedOnAConnection() {
        let offers = Offers()
        #expect(offers.sending(1, assetCount: 1))
        #expect(!offers.sending(1, assetCount: 1))
        #expect(offers.retire([1]) == [1])
        #expect(!offers.sending(1, assetCount: 1))
    }

    @Test func aLateYesIsCancelledOnceAndALateNoIsIgnored() throws {
        let offers = Offers()
        #expect(offers.sending(1, assetCount: 1))
        #expect(offers.sending(2, assetCount: 1))
        #expect(offers.replyTimedOut(1))
        #expect(offers.replyTimedOut(2))
        // The waiter was told once; a second timeout finds nobody waiting.
        #expect(!offers.replyTimedOut(1))
        #expect(try offers.replyArrived(reply(1)) == .cancelLateAcceptance)
        #expect(try offers.replyArrived(reply(2, .declined)) == .ignore)
        // Only one late answer: a duplicate is still a violation.
        #expect(isViolation { _ = try offers.replyArrived(reply(1)) })
    }

    @Test func anExpiredOfferTheSenderGaveUpStillGetsItsCancel() throws {
        let offers = Offers()
        #expect(offers.sending(1, assetCount: 1))
        #expect(offers.replyTimedOut(1))
        #expect(offers.retire([1]) == [1])
        #expect(try offers.replyArrived(reply(1)) == .cancelLateAcceptance)
    }

    @Test func repliesAndReceiptsForRetiredOffersAreIgnored() throws {
        let offers = Offers()
        #expect(offers.sending(1, assetCount: 3))
        _ = try offers.replyArrived(reply(1))
        #expect(offers.retire([1, 99]) == [1])
        #expect(try !offers.receiptArrived(for: 1))
        #expect(try offers.replyArrived(reply(1)) == .ignore)
    }

    @Test func anAnswerRacingItsTimeoutResumesTheWaiterOnce() throws {
        // Answer first: the timer then finds nothing to do.
        let offers = Offers()
        #expect(offers.sending(1, assetCount: 1))
        #expect(try offers.replyArrived(reply(1)) == .deliver)
        #expect(!offers.replyTimedOut(1))
        // Timer first: the answer is late, and the waiter is not resumed again.
        #expect(offers.sending(2, assetCount: 1))
        #expect(offers.replyTimedOut(2))
        #expect(try offers.replyArrived(reply(2)) != .deliver)
    }

    @Test func closingEndsEveryOpenOfferAndItsWaiters() throws {
        let offers = Offers()
        #expect(offers.sending(1, assetCount: 1))
        #expect(offers.sending(2, assetCount: 1))
        #expect(offers.sending(3, assetCount: 1))
        _ = try offers.replyArrived(reply(2))
        _ = offers.retire([3])
        let ended = offers.closeAll()
        #expect(ended.awaitingReply == [1])
        #expect(Set(ended.open) == [1, 2])
        #expect(!offers.sending(1, assetCount: 1))
        #expect(try !offers.receiptArrived(for: 2))
    }

    @Test func aSendThatFailedTellsItsWaiterOnce() {
        let offers = Offers()
        #expect(offers.sending(1, assetCount: 1))
        #expect(offers.replyAbandoned(1))
        #expect(!offers.replyAbandoned(1))
        #expect(!offers.replyTimedOut(1))
    }
}
