import Testing
@testable import LocalFirstSync
@testable import LFSyncContent

/// What a peer can queue up on a receiver is bounded (PROTOCOL.md, "Limits and deadlines").
extension IncomingOffersTests {
    static func single(_ name: String) -> PlacedAsset {
        WireFixtures.placed(asset((.primary, RelativePath(name), Array(name.utf8))))
    }

    @Test func atMostFourPushesWaitForAPersonAtOnce() throws {
        var state = IncomingOffers()
        for id in 1...UInt64(IncomingOffers.maxUndecidedPushes) {
            let actions = try state.received(Self.offer(id, [Self.single("p\(id).jpg")]))
            #expect(actions.contains { if case .announce = $0 { true } else { false } })
        }
        // The fifth is refused at once, nobody is asked.
        let fifth = try state.received(Self.offer(5, [Self.single("p5.jpg")]))
        #expect(!fifth.contains { if case .announce = $0 { true } else { false } })
        #expect(Self.replies(fifth).map(\.decision) == [.refused])
        // Once one is answered, a new push may be asked about again.
        _ = Self.settle(&state, state.decided(pushID: 1, accepted: false))
        let sixth = try state.received(Self.offer(6, [Self.single("p6.jpg")]))
        #expect(sixth.contains { if case .announce = $0 { true } else { false } })
    }

    @Test func offersSentWithoutWaitingForRepliesAreBounded() throws {
        var state = IncomingOffers()
        _ = try state.received(Self.offer(1, last: false, [Self.single("first.jpg")]))
        for id in 2...UInt64(IncomingOffers.maxUnansweredOffers) {
            _ = try state.received(Self.offer(id, push: 1, last: false, [Self.single("f\(id).jpg")]))
        }
        #expect(throws: SyncError.protocolViolation("more than \(IncomingOffers.maxUnansweredOffers) offers sent without waiting for their replies")) {
            _ = try state.received(Self.offer(100, push: 1, last: false, [Self.single("one-too-many.jpg")]))
        }
    }

    /// PROTOCOL.md, Limits: at most 1024 offers open (Receipts still owed) per connection.
    /// Offers answered one by one, each with chunks still to come, fill it; the next is refused.
    @Test func atMost1024OffersAreOpen() throws {
        var state = IncomingOffers()
        _ = IncomingOffersTests.settle(&state, try state.received(Self.offer(1, last: false, [Self.single("first.jpg")])))
        let accepted = IncomingOffersTests.settle(&state, state.decided(pushID: 1, accepted: true))
        #expect(IncomingOffersTests.replies(accepted).map(\.offerID) == [1])
        for id in 2...UInt64(IncomingOffers.maxLiveOffers) {
            let actions = IncomingOffersTests.settle(&state, try state.received(Self.offer(id, push: 1, last: false, [Self.single("f\(id).jpg")])))
            #expect(IncomingOffersTests.replies(actions).map(\.offerID) == [id])
        }
        #expect(IncomingOffers.maxLiveOffers == 1024)
        #expect(throws: SyncError.protocolViolation("more than 1024 offers open on this connection")) {
            _ = try state.received(Self.offer(5000, push: 1, last: false, [Self.single("one-too-many.jpg")]))
        }
    }

    @Test func pushesLeftOpenAreBounded() throws {
        var state = IncomingOffers()
        // Each push's first offer is answered (refused: there is no consent here) but never ends.
        for id in 1...UInt64(IncomingOffers.maxOpenPushes) {
            _ = try state.received(Self.offer(id, last: false, [Self.single("../open\(id).jpg")]))
        }
        #expect(throws: SyncError.protocolViolation("more than \(IncomingOffers.maxOpenPushes) pushes open on this connection")) {
            _ = try state.received(Self.offer(1000, last: false, [Self.single("one-more.jpg")]))
        }
    }

    /// Session flow 5: every accepted asset gets exactly one Receipt, also when
    /// the Cancel came before the offer's plan was made.
    @Test func aCancelBeforeThePlanStillFailsTheAssetsMissingData() throws {
        var state = IncomingOffers()
        let photo = Self.single("cancelled.jpg")
        _ = try state.received(Self.offer(1, [photo]))
        let decided = state.decided(pushID: 1, accepted: true)
        guard case let .plan(offerID, assets, known)? = decided.first else {
            Issue.record("no plan: \(decided)")
            return
        }
        #expect(state.cancelled(offerID: 1, reason: "changed").isEmpty)
        let actions = Self.settle(&state, state.planned(offerID: offerID, .success(Self.freshPlan(assets, known: known))))
        #expect(Self.replies(actions).map(\.decision) == [.accepted])
        let receipts = Self.receipts(actions)
        #expect(receipts.count == 1)
        if case let .failed(reason)? = receipts.first?.outcome { #expect(reason.contains("cancelled")) } else {
            Issue.record("expected a failed receipt, got \(receipts)")
        }
    }
}
