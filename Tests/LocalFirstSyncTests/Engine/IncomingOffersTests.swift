import Testing
@testable import LocalFirstSync
@testable import LFSyncContent
@testable import LFSyncCrypto
@testable import LFSyncStore
@testable import LFSyncLanding
@testable import LFSyncWire

/// The receiving side's rules, driven event by event without a socket or a
/// disk: consent once per push, each content requested once however many
/// placements need it, copies handed out with the last taking the file,
/// cancels and failures reaching every asset that waited.
@Suite struct IncomingOffersTests {
    typealias Action = IncomingOffers.Action

    // MARK: - Fixtures

    static func manifest(_ path: RelativePath, _ bytes: [UInt8], mtime: Int64 = 0) -> FileManifest {
        FileManifest(path: path, contents: bytes, modificationTimeNs: mtime)
    }

    static func asset(_ files: (FileRole, RelativePath, [UInt8])...) -> Asset {
        Asset(files: files.map { .init(role: $0.0, manifest: manifest($0.1, $0.2)) })
    }

    static let photoBytes = Array("photo bytes".utf8)
    static let presetBytes = Array("<plist>one edit preset</plist>".utf8)

    /// One photo standing at two paths, and two photos sharing a byte-identical sidecar.
    static let copies = WireFixtures.placed(asset((.primary, "a.jpg", photoBytes)), asset((.primary, "Backup/a.jpg", photoBytes)))
    static let first = WireFixtures.placed(asset((.primary, "IMG_1.HEIC", Array("one".utf8)), (.sidecar, "IMG_1.AAE", presetBytes)))
    static let second = WireFixtures.placed(asset((.primary, "IMG_2.HEIC", Array("two".utf8)), (.sidecar, "IMG_2.AAE", presetBytes)))

    static func offer(_ id: UInt64, push: UInt64? = nil, last: Bool = true, _ assets: [PlacedAsset]) -> WireMessage.Offer {
        WireMessage.Offer(offerID: id, push: .init(pushID: push ?? id, isLast: last, fileCount: 0, byteCount: 0), assets: assets)
    }

    /// A plan in which nothing is in place and every unknown content needs all its chunks.
    static func freshPlan(_ assets: [PlacedAsset], known: Set<Hash256>) -> IncomingOffers.Plan {
        var plan = IncomingOffers.Plan()
        for asset in assets {
            plan.inPlace[asset.contentID] = asset.placements.map { $0.files.map { _ in false } }
            for file in asset.files where !known.contains(file.manifest.fileHash) {
                var missing = ChunkBitmap(chunkCount: file.manifest.chunks.count)
                for index in file.manifest.chunks.indices { missing.insert(index) }
                plan.missing[file.manifest.fileHash] = missing
            }
        }
        return plan
    }

    static func chunk(_ offerID: UInt64, _ asset: PlacedAsset, file: Int, index: Int = 0) -> WireMessage.Chunk {
        let manifest = asset.files[file].manifest
        return .init(offerID: offerID, contentID: asset.contentID, fileIndex: UInt16(file), chunkIndex: UInt32(index),
                     payload: .raw([UInt8](repeating: 0, count: Int(manifest.chunks[index].length))[...]))
    }

    /// Runs `.plan` actions through `plan` (or a fresh plan) until none is left; returns everything else.
    static func settle(_ state: inout IncomingOffers, _ actions: [Action],
                       plan: ([PlacedAsset], Set<Hash256>) -> IncomingOffers.Plan = freshPlan) -> [Action] {
        var pending = actions
        var out: [Action] = []
        while !pending.isEmpty {
            let action = pending.removeFirst()
            if case let .plan(offerID, assets, known) = action {
                pending = state.planned(offerID: offerID, .success(plan(assets, known))) + pending
            } else {
                out.append(action)
            }
        }
        return out
    }

    static func replies(_ actions: [Action]) -> [WireMessage.OfferReply] {
        actions.flatMap { action -> [WireMessage.OfferReply] in
            guard case let .send(messages) = action else { return [] }
            return messages.compactMap { if case let .offerReply(reply) = $0 { reply } else { nil } }
        }
    }

    static func receipts(_ actions: [Action]) -> [WireMessage.Receipt] {
        actions.flatMap { action -> [WireMessage.Receipt] in
            guard case let .send(messages) = action else { return [] }
            return messages.compactMap { if case let .receipt(receipt) = $0 { receipt } else { nil } }
        }
    }

    static func verifications(_ actions: [Action]) -> [Hash256] {
        actions.compactMap { if case let .verify(hash) = $0 { hash } else { nil } }
    }

    static func installs(_ actions: [Action]) -> [IncomingOffers.InstallOrder] {
        actions.compactMap { if case let .install(order) = $0 { order } else { nil } }
    }

    /// One photo on its way in offer 1 (its chunk received, not yet written), and a
    /// second placement of the same bytes, for a later offer.
    static func photoOnItsWay(
        _ state: inout IncomingOffers
    ) throws -> (photo: PlacedAsset, later: PlacedAsset, destination: IncomingOffers.ChunkDestination) {
        let photo = WireFixtures.placed(asset((.primary, "a.jpg", photoBytes)))
        let later = WireFixtures.placed(asset((.primary, "Backup/a.jpg", photoBytes)))
        _ = try state.received(offer(1, last: false, [photo]))
        _ = settle(&state, state.decided(pushID: 1, accepted: true))
        let destination = try #require(try state.destination(of: chunk(1, photo, file: 0)))
        return (photo, later, destination)
    }

    /// The `known` set of each `.plan` action for `offerID`.
    static func plans(of offerID: UInt64, in actions: [Action]) -> [Set<Hash256>] {
        actions.compactMap { action -> Set<Hash256>? in
            if case let .plan(id, _, known) = action, id == offerID { known } else { nil }
        }
    }

    // MARK: - Tests

    @Test func eachContentIsRequestedOnceAndEveryPlacementGetsItsCopy() throws {
        var state = IncomingOffers()
        let offer = Self.offer(1, [Self.copies, Self.first, Self.second])
        let announced = try state.received(offer)
        guard case .announce? = announced.first else { Issue.record("no announcement: \(announced)"); return }
        let actions = Self.settle(&state, state.decided(pushID: 1, accepted: true))
        let reply = try #require(Self.replies(actions).first)
        #expect(reply.decision == .accepted)
        // The photo once (not per placement), the preset once (not per photo).
        let requested = reply.needed.flatMap { entry in entry.files.map { (entry.contentID, Int($0.fileIndex)) } }
        #expect(requested.count == 4, "\(requested)")
        #expect(requested.filter { $0.0 == Self.copies.contentID }.count == 1)
        let presetIndex = try #require(Self.first.files.firstIndex { $0.role == .sidecar })
        #expect(requested.contains { $0 == (Self.first.contentID, presetIndex) })
        #expect(!requested.contains { $0.0 == Self.second.contentID && $0.1 == presetIndex },
                "the shared sidecar is asked for once, not for the second photo")
        // The second photo's sidecar position was not requested: a chunk for it is a violation.
        var probe = state
        #expect(throws: SyncError.self) { _ = try probe.destination(of: Self.chunk(1, Self.second, file: presetIndex)) }

        // Every requested chunk arrives and is written.
        var finished: [Hash256] = []
        for (contentID, file) in requested {
            let asset = try #require([Self.copies, Self.first, Self.second].first { $0.contentID == contentID })
            let destination = try #require(try state.destination(of: Self.chunk(1, asset, file: file)))
            finished += Self.verifications(state.chunkWritten(destination, bytes: 1, .success(())))
        }
        #expect(Set(finished).count == 4)
        // A chunk sent twice is a violation.
        #expect(throws: SyncError.self) { _ = try state.destination(of: Self.chunk(1, Self.copies, file: 0)) }

        var orders: [IncomingOffers.InstallOrder] = []
        for hash in finished { orders += Self.installs(state.verified(hash, .success(()))) }
        #expect(orders.count == 3)
        // The photo: one placement gets a copy, the other the staged file itself.
        let copiesOrder = try #require(orders.first { $0.asset.contentID == Self.copies.contentID })
        let photoHash = Self.copies.files[0].manifest.fileHash
        #expect(Set(copiesOrder.sources.flatMap { $0 }) == [.copy(photoHash), .take(photoHash)])
        // The preset: copied for the photo installed first, taken by the last.
        let presetHash = Self.first.files[presetIndex].manifest.fileHash
        let presetSources = orders.flatMap { $0.sources.flatMap { $0 } }.filter { $0 == .copy(presetHash) || $0 == .take(presetHash) }
        #expect(presetSources == [.copy(presetHash), .take(presetHash)])

        var received: [WireMessage.Receipt] = []
        var ended = false
        for order in orders {
            let actions = state.installed(offerID: order.offerID, contentID: order.asset.contentID, .success([]))
            received += Self.receipts(actions)
            ended = ended || actions.contains { if case .pushEnded(1) = $0 { true } else { false } }
        }
        #expect(received.map(\.outcome) == [.stored, .stored, .stored])
        #expect(ended)
        #expect(state.isIdle)
    }

    @Test func consentIsAskedOncePerPushAndCoversItsLaterOffers() throws {
        var state = IncomingOffers()
        #expect(try state.received(Self.offer(1, last: false, [Self.copies])).count == 1)  // the announcement
        // The second offer of the push waits for the consent given on the first.
        #expect(try state.received(Self.offer(2, push: 1, [Self.first])).isEmpty)
        let actions = Self.settle(&state, state.decided(pushID: 1, accepted: true))
        #expect(Self.replies(actions).map(\.offerID) == [1, 2])
        #expect(Self.replies(actions).allSatisfy { $0.decision == .accepted })
        // An offer continuing a push that has seen its last offer is a violation, as is a reused ID.
        #expect(throws: SyncError.self) { _ = try state.received(Self.offer(3, push: 1, [Self.second])) }
        #expect(throws: SyncError.self) { _ = try state.received(Self.offer(2, [Self.second])) }
        #expect(throws: SyncError.self) { _ = try state.received(Self.offer(9, push: 8, [Self.second])) }
    }

    @Test func aDeclinedPushDeclinesEveryOfferWithoutPlanning() throws {
        var state = IncomingOffers()
        _ = try state.received(Self.offer(1, last: false, [Self.copies]))
        _ = try state.received(Self.offer(2, push: 1, last: false, [Self.first]))
        let declined = state.decided(pushID: 1, accepted: false, reason: "not now")
        #expect(!declined.contains { if case .plan = $0 { true } else { false } })
        #expect(Self.replies(declined).map(\.decision) == [.declined, .declined])
        let later = try state.received(Self.offer(3, push: 1, [Self.second]))
        #expect(Self.replies(later).map(\.decision) == [.declined])
        #expect(later.contains { if case .pushEnded(1) = $0 { true } else { false } })
    }

    @Test func anEmptyPushIsAcceptedWithoutAsking() throws {
        var state = IncomingOffers()
        let actions = try state.received(Self.offer(5, []))
        #expect(Self.replies(actions).map(\.decision) == [.accepted])
        #expect(actions.contains { if case .pushEnded(5) = $0 { true } else { false } })
        #expect(state.isIdle)
    }

    @Test func hostileNamesRefuseThePushBeforeAnyoneIsAsked() throws {
        var state = IncomingOffers()
        let hostile = WireFixtures.placed(Self.asset((.primary, "../escape.jpg", Self.photoBytes)))
        let actions = try state.received(Self.offer(1, last: false, [hostile]))
        #expect(!actions.contains { if case .announce = $0 { true } else { false } })
        #expect(Self.replies(actions).map(\.decision) == [.refused])
        // The rest of that push is refused too.
        #expect(Self.replies(try state.received(Self.offer(2, push: 1, [Self.first]))).map(\.decision) == [.refused])
    }

    /// A copy found in a later offer while the first copy's install is still
    /// landing: the content is gone from the registry and not yet in the chunk
    /// index, so planning waits for that install — then copies locally.
    @Test func anOfferNeedingAContentBeingLandedIsPlannedOnceItHasLanded() throws {
        var state = IncomingOffers()
        let (photo, later, destination) = try Self.photoOnItsWay(&state)
        let hash = try #require(Self.verifications(state.chunkWritten(destination, bytes: 1, .success(()))).first)
        let order = try #require(Self.installs(state.verified(hash, .success(()))).first)
        #expect(order.sources == [[.take(hash)]])
        // The copy's offer arrives while the take is landing: not planned yet.
        let arrived = try state.received(Self.offer(2, push: 1, [later]))
        #expect(!arrived.contains { if case .plan = $0 { true } else { false } })
        // Landed (and indexed): now it is planned, with the content no longer in flight here.
        let landed = state.installed(offerID: 1, contentID: photo.contentID, .success([]))
        let plans = landed.compactMap { action -> (UInt64, Set<Hash256>)? in
            if case let .plan(offerID, _, known) = action { (offerID, known) } else { nil }
        }
        #expect(plans.count == 1 && plans.first?.0 == 2)
        #expect(plans.first?.1.contains(hash) == false)
    }

    /// The waiting offer needs three contents that land one after another, in an
    /// order unlike its own: it stays unplanned until the last has landed, then is
    /// planned exactly once (after each install the wait is looked at again).
    @Test func anOfferNeedingSeveralLandingContentsWaitsForTheLast() throws {
        var state = IncomingOffers()
        let names = ["a", "b", "c"]
        let originals = names.map { WireFixtures.placed(Self.asset((.primary, RelativePath("\($0).jpg"), Array("bytes of \($0)".utf8)))) }
        let copies = names.map { WireFixtures.placed(Self.asset((.primary, RelativePath("Backup/\($0).jpg"), Array("bytes of \($0)".utf8)))) }
        _ = try state.received(Self.offer(1, last: false, originals))
        _ = Self.settle(&state, state.decided(pushID: 1, accepted: true))
        var orders: [IncomingOffers.InstallOrder] = []
        for original in originals {
            let destination = try #require(try state.destination(of: Self.chunk(1, original, file: 0)))
            let hash = try #require(Self.verifications(state.chunkWritten(destination, bytes: 1, .success(()))).first)
            orders += Self.installs(state.verified(hash, .success(())))
        }
        #expect(orders.count == 3)
        #expect(!(try state.received(Self.offer(2, push: 1, copies))).contains { if case .plan = $0 { true } else { false } })
        // Landed last first, then first, then the middle one.
        for (step, index) in [2, 0, 1].enumerated() {
            let landed = state.installed(offerID: 1, contentID: originals[index].contentID, .success([]))
            let plans = Self.plans(of: 2, in: landed)
            if step < 2 {
                #expect(plans.isEmpty, "planned while \(2 - step) of its contents were still landing")
            } else {
                #expect(plans.count == 1)
                #expect(plans.first.map { $0.isDisjoint(with: originals.map { $0.files[0].manifest.fileHash }) } == true)
            }
        }
    }

    @Test func aPlanOvertakenByAContentLandingIsMadeAgainNotRefused() throws {
        // Plans are made off the session's actor, which meanwhile goes on with other events.
        var state = IncomingOffers()
        let (photo, later, destination) = try Self.photoOnItsWay(&state)
        // The later offer is planned while the content is still on its way.
        let known = try #require(Self.plans(of: 2, in: try state.received(Self.offer(2, push: 1, [later]))).first)
        // While that plan is being made, the content is written, verified and landed.
        let hash = try #require(Self.verifications(state.chunkWritten(destination, bytes: 1, .success(()))).first)
        #expect(known.contains(hash))
        #expect(Self.installs(state.verified(hash, .success(()))).count == 1)
        _ = state.installed(offerID: 1, contentID: photo.contentID, .success([]))
        // The plan describes a moment that has passed: made again, not refused.
        let answered = state.planned(offerID: 2, .success(Self.freshPlan([later], known: known)))
        #expect(Self.replies(answered).isEmpty, "no reply (no refusal) on the stale plan")
        let again = Self.plans(of: 2, in: answered)
        #expect(again.count == 1 && again.first?.contains(hash) == false)
    }

    @Test func aContentOnItsWayIsNotRequestedAgainByALaterOffer() throws {
        var state = IncomingOffers()
        _ = try state.received(Self.offer(1, last: false, [Self.first]))
        var actions = Self.settle(&state, state.decided(pushID: 1, accepted: true))
        #expect(Self.replies(actions).first?.needed.flatMap(\.files).count == 2)
        let presetIndex = try #require(Self.first.files.firstIndex { $0.role == .sidecar })
        let presetHash = Self.first.files[presetIndex].manifest.fileHash
        // The second photo comes in a later offer while the preset is still on its way.
        var knownAtPlan: Set<Hash256> = []
        actions = Self.settle(&state, try state.received(Self.offer(2, push: 1, [Self.second]))) { assets, known in
            knownAtPlan = known
            return Self.freshPlan(assets, known: known)
        }
        #expect(knownAtPlan.contains(presetHash))
        let reply = try #require(Self.replies(actions).first)
        #expect(reply.needed.flatMap(\.files).count == 1, "only the second photo's own file")
        // The preset arrives for offer 1; when it is staged, both photos can land.
        for file in Self.first.files.indices {
            let destination = try #require(try state.destination(of: Self.chunk(1, Self.first, file: file)))
            _ = state.chunkWritten(destination, bytes: 1, .success(()))
        }
        let primaryIndex = try #require(Self.second.files.firstIndex { $0.role == .primary })
        let destination = try #require(try state.destination(of: Self.chunk(2, Self.second, file: primaryIndex)))
        _ = state.chunkWritten(destination, bytes: 1, .success(()))
        var orders: [IncomingOffers.InstallOrder] = []
        for file in Self.first.files + [Self.second.files[primaryIndex]] {
            orders += Self.installs(state.verified(file.manifest.fileHash, .success(())))
        }
        #expect(Set(orders.map(\.offerID)) == [1, 2])
    }

    @Test func cancellingAnOfferFailsTheAssetsOfLaterOffersWaitingForItsContent() throws {
        var state = IncomingOffers()
        _ = try state.received(Self.offer(1, last: false, [Self.first]))
        _ = Self.settle(&state, state.decided(pushID: 1, accepted: true))
        _ = Self.settle(&state, try state.received(Self.offer(2, push: 1, [Self.second])))
        let actions = state.cancelled(offerID: 1, reason: "source changed")
        let failed = Self.receipts(actions)
        #expect(Set(failed.map(\.offerID)) == [1, 2])
        #expect(failed.allSatisfy { if case .failed = $0.outcome { true } else { false } })
        // Chunks the sender had already sent for the cancelled offer are dropped, not a violation.
        #expect(try state.destination(of: Self.chunk(1, Self.first, file: 0)) == nil)
    }

    @Test func aCancelSparesAContentWhoseChunksAllArrivedWhileItsWriteIsStillLanding() throws {
        // Chunk writes land on a thread of their own, after the session has read on: the
        // sender's Cancel can come between a chunk's arrival and its write's outcome.
        var state = IncomingOffers()
        _ = try state.received(Self.offer(1, [Self.copies]))
        _ = Self.settle(&state, state.decided(pushID: 1, accepted: true))
        let destination = try #require(try state.destination(of: Self.chunk(1, Self.copies, file: 0)))
        let cancelled = state.cancelled(offerID: 1, reason: "some files changed while being sent")
        #expect(Self.receipts(cancelled).isEmpty, "nothing of this asset was still to come")
        let written = state.chunkWritten(destination, bytes: 1, .success(()))
        #expect(Self.verifications(written) == [Self.copies.files[0].manifest.fileHash])
    }

    @Test func aContentThatFailsFailsEveryAssetWaitingForIt() throws {
        var state = IncomingOffers()
        _ = try state.received(Self.offer(1, [Self.first, Self.second]))
        _ = Self.settle(&state, state.decided(pushID: 1, accepted: true))
        let presetIndex = try #require(Self.first.files.firstIndex { $0.role == .sidecar })
        let destination = try #require(try state.destination(of: Self.chunk(1, Self.first, file: presetIndex)))
        let actions = state.chunkWritten(destination, bytes: 1, .failure(.chunkHashMismatch(index: 0)))
        #expect(Set(Self.receipts(actions).map(\.contentID)) == [Self.first.contentID, Self.second.contentID])
        // The first photo's own file is no longer needed: its late chunk is dropped.
        let primaryIndex = try #require(Self.first.files.firstIndex { $0.role == .primary })
        #expect(try state.destination(of: Self.chunk(1, Self.first, file: primaryIndex)) == nil)
    }

    @Test func assetsAlreadyInPlaceAreReceiptedAtOnceInOneBatch() throws {
        var state = IncomingOffers()
        _ = try state.received(Self.offer(1, [Self.copies, Self.first]))
        let actions = Self.settle(&state, state.decided(pushID: 1, accepted: true)) { assets, _ in
            var plan = IncomingOffers.Plan()
            for asset in assets { plan.inPlace[asset.contentID] = asset.placements.map { $0.files.map { _ in true } } }
            return plan
        }
        #expect(Self.replies(actions).first?.needed.isEmpty == true)
        let batches = actions.compactMap { action -> [WireMessage]? in if case let .send(messages) = action { messages } else { nil } }
        #expect(batches.contains { $0.count == 2 && Self.receipts([.send($0)]).count == 2 }, "both receipts in one message batch")
        #expect(Self.installs(actions).isEmpty && Self.verifications(actions).isEmpty)
        #expect(state.isIdle)
    }

    @Test func aPlanThatFailsRefusesTheOffer() throws {
        var state = IncomingOffers()
        _ = try state.received(Self.offer(1, [Self.copies]))
        guard case let .plan(offerID, _, _)? = state.decided(pushID: 1, accepted: true).last else {
            Issue.record("no plan")
            return
        }
        let actions = state.planned(offerID: offerID, .failure(.insufficientSpace(needed: 10, available: 1)))
        let reply = try #require(Self.replies(actions).first)
        #expect(reply.decision == .refused)
        #expect(reply.reason?.contains("not enough free space") == true)
        #expect(state.isIdle)
    }

    /// Issue 47: a receiver with room for part of an offer takes that part. The offer is
    /// accepted, the asset that does not fit is asked for nothing and gets a failed
    /// Receipt saying why — after the reply — and the asset that fits lands as usual.
    @Test func anAssetWithoutRoomFailsAloneAndTheRestOfTheOfferIsTaken() throws {
        var state = IncomingOffers()
        let small = WireFixtures.placed(Self.asset((.primary, "small.jpg", Array("fits".utf8))))
        let large = WireFixtures.placed(Self.asset((.primary, "large.mov", Array("does not fit".utf8))))
        _ = try state.received(Self.offer(1, [large, small]))
        let actions = Self.settle(&state, state.decided(pushID: 1, accepted: true)) { assets, known in
            var plan = Self.freshPlan(assets.filter { $0.contentID != large.contentID }, known: known)
            plan.refused[large.contentID] = .insufficientSpace(needed: 12, available: 5)
            return plan
        }
        let reply = try #require(Self.replies(actions).first)
        #expect(reply.decision == .accepted)
        #expect(reply.needed.map(\.contentID) == [small.contentID], "chunks asked for the asset with no room")
        let refusal = try #require(Self.receipts(actions).first)
        #expect(refusal.contentID == large.contentID)
        guard case let .failed(reason) = refusal.outcome else {
            Issue.record("the asset with no room was not failed: \(refusal.outcome)")
            return
        }
        #expect(reason.contains("not enough free space"), "\(reason)")
        let replyAt = try #require(actions.firstIndex { if case let .send(m) = $0 { m.contains { if case .offerReply = $0 { true } else { false } } } else { false } })
        let receiptAt = try #require(actions.firstIndex { if case let .send(m) = $0 { m.contains { if case .receipt = $0 { true } else { false } } } else { false } })
        #expect(replyAt < receiptAt, "a Receipt before its offer's reply")
        // The asset that fits is still owed its chunk, and lands.
        let destination = try #require(try state.destination(of: Self.chunk(1, small, file: 0)))
        let written = state.chunkWritten(destination, bytes: 4, .success(()))
        #expect(Self.verifications(written) == [small.files[0].manifest.fileHash])
        #expect(!state.isIdle)
    }

    /// Found by the interleaving tests: an offer whose own assets all failed retired and
    /// dropped the rest of its chunks, though it carried a sidecar a later offer's asset
    /// waited for, which then never got its Receipt.
    @Test func anOfferWhoseAssetsFailedStillCarriesASharedSidecarForALaterOffer() throws {
        var state = IncomingOffers()
        _ = try state.received(Self.offer(1, push: 1, last: false, [Self.first]))
        _ = try state.received(Self.offer(2, push: 1, last: true, [Self.second]))
        _ = Self.settle(&state, state.decided(pushID: 1, accepted: true))
        let photo = try #require(try state.destination(of: Self.chunk(1, Self.first, file: 0)))
        let failed = state.chunkWritten(photo, bytes: 3, .failure(.libraryUnavailable("disk gone")))
        #expect(Self.receipts(failed).map(\.contentID) == [Self.first.contentID])
        // The preset still comes under offer 1, where it was asked for.
        let preset = try #require(try state.destination(of: Self.chunk(1, Self.first, file: 1)), "the shared preset was dropped")
        let second = try #require(try state.destination(of: Self.chunk(2, Self.second, file: 0)))
        var actions = state.chunkWritten(preset, bytes: Self.presetBytes.count, .success(()))
        actions += state.chunkWritten(second, bytes: 3, .success(()))
        for hash in Self.verifications(actions) { actions += state.verified(hash, .success(())) }
        #expect(Self.installs(actions).map(\.offerID) == [2])
        let landed = state.installed(offerID: 2, contentID: Self.second.contentID, .success([]))
        #expect(Self.receipts(landed).map(\.outcome) == [.stored])
        #expect(state.isIdle)
    }

    /// Found by the interleaving tests: a content whose every asset failed while it was
    /// being verified was forgotten, and a later offer needing it started a second
    /// verification of the same staged file. It stays until its result is in, and the
    /// later offer joins it.
    @Test func aContentBeingVerifiedIsJoinedNotVerifiedTwice() throws {
        var state = IncomingOffers()
        let photoHash = Self.first.files[0].manifest.fileHash
        _ = try state.received(Self.offer(1, [Self.first]))
        // The photo is complete in staging already; the preset has to come.
        let accepted = Self.settle(&state, state.decided(pushID: 1, accepted: true)) { assets, known in
            var plan = Self.freshPlan(assets, known: known)
            plan.missing[photoHash] = ChunkBitmap(chunkCount: 1)
            return plan
        }
        #expect(Self.verifications(accepted) == [photoHash])
        // The sender cancels: the preset will never come, so the photo's asset fails.
        let cancelled = state.cancelled(offerID: 1, reason: "stopped")
        #expect(Self.receipts(cancelled).map(\.contentID) == [Self.first.contentID])
        #expect(!cancelled.contains { if case .discard(photoHash) = $0 { true } else { false } })
        // A copy of the photo alone, offered now, waits for the verification under way.
        let copy = WireFixtures.placed(Self.asset((.primary, "Copy/IMG_1.HEIC", Array("one".utf8))))
        _ = try state.received(Self.offer(2, [copy]))
        let later = Self.settle(&state, state.decided(pushID: 2, accepted: true))
        #expect(Self.verifications(later).isEmpty, "the same staged file verified twice at once")
        let verified = state.verified(photoHash, .success(()))
        #expect(Self.installs(verified).map(\.offerID) == [2])
        #expect(Self.installs(verified).first?.sources == [[.take(photoHash)]])
    }
}
