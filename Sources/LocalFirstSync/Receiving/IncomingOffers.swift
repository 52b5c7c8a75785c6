import LFSyncContent
import LFSyncCrypto
import LFSyncStore
import LFSyncLanding
import LFSyncSystem
import LFSyncWire

/// The receiving half of one connection, as bookkeeping only: pushes and
/// their consent, offers and the placements of their assets, and the file
/// contents on their way in.
///
/// It does no I/O and owns no file: every event returns the `Action`s that
/// follow from it, in order, and `SessionReceiver` carries them out and reports
/// back (`planned`, `chunkWritten`, `verified`, `installed`). So every rule
/// below can be tested without a socket or a disk, the way swift-nio tests
/// its decoders.
///
/// **The receiver's steps, one name each:** *plan* (check names and room,
/// find what is already here, say which chunks to send), *receive* (write
/// each chunk into staging), *verify* (check the whole file against its hash
/// and stage it), *install* (land the asset's placements in the library,
/// durably) and *receipt* (tell the sender, one per accepted asset).
///
/// **One content, one transfer.** A file content (a file hash) is received
/// once per connection however many placements need it: several copies of
/// an asset, an `.AAE` preset shared by a hundred photos, a copy in a later
/// offer of the same push. The first offer that needs it asks for its chunks
/// under one (asset, file) of its own — the *carrier* — and every placement
/// file that needs it waits for it; the last of them takes the verified file,
/// the others get copies of it.
///
/// **Consent once per push.** The first offer of a push is announced and
/// waits for its person (or trust policy); the answer covers every later
/// offer of the push.
///
/// **One stage per thing.** An offer is awaiting consent → queued → planning → open
/// (owed chunks, pending assets) → retired; an asset of an open offer is waiting for
/// contents → installing → receipted (it leaves); a content is receiving (missing,
/// writing) → verifying → staged → taken by an install (`landing` until it has landed)
/// or failed. Each is an enum whose cases carry their data, so no two tables can
/// disagree about where something is. `IncomingOffersInterleavingTests` drives it
/// through generated event orders against the rules.
struct IncomingOffers {
    enum Action {
        /// A new push: ask about it (or let the trust policy answer), then call `decided`.
        case announce(pushID: UInt64, header: WireMessage.PushHeader, firstAssets: [PlacedAsset])
        /// Work out what the offer needs (I/O), then call `planned`.
        case plan(offerID: UInt64, assets: [PlacedAsset], known: Set<Hash256>)
        case send([WireMessage])
        /// Every chunk of this content is in: verify and stage it, then call `verified`.
        case verify(Hash256)
        /// Every content of an asset is staged: land all its placements, then call `installed`.
        case install(InstallOrder)
        /// Nobody needs this content any more: drop its staged file or partial handle.
        case discard(Hash256)
        case progress(pushID: UInt64, TransferProgress)
        case outcome(pushID: UInt64, contentID: ContentID, ReceiveSessionHandle.Outcome)
        /// Stored assets, for the receiver's own ledger (received from this peer).
        case recordReceived([(content: ContentID, bytes: UInt64)])
        case pushEnded(pushID: UInt64)
        case log(String)
    }

    /// How to land one asset (decided here, carried out by `LibraryImporter`).
    typealias InstallOrder = LFSyncLanding.InstallOrder
    /// What the importer found out about an offer.
    typealias Plan = ImportPlan

    // MARK: - State
    //
    // Each offer, each asset and each content is in exactly one stage, an enum whose cases
    // carry what is valid there; a table holds each kind once. What is derived (an offer's
    // place in the planning order, a push's live offers, how many offers are unanswered) is
    // computed from the stages, never kept beside them.

    private enum Consent {
        case pending
        case accepted
        case declined(String)
        case refused(String)
    }

    private struct Push {
        var consent: Consent = .pending
        /// Its last offer has arrived: the push ends once its offers have all retired.
        var lastSeen = false
        var progress = TransferProgress()

        var isUndecided: Bool { if case .pending = consent { true } else { false } }
    }

    private struct AssetKey: Hashable {
        let offerID: UInt64
        let contentID: ContentID
    }

    /// An asset of an answered offer, waiting for its Receipt.
    private struct PendingAsset {
        enum Stage {
            /// Contents not yet staged.
            case waiting(for: Set<Hash256>)
            /// Handed to be landed; the contents its install takes (renames into the library).
            case installing(taking: [Hash256])
        }

        /// `needs[placement][file]`: the content hash it waits for, nil where already in place.
        let needs: [[Hash256?]]
        var stage: Stage

        var isInstalling: Bool { if case .installing = stage { true } else { false } }
    }

    /// What an answered offer is owed, and what of it is pending.
    private struct OpenOffer {
        /// Chunks still owed per carrier (asset, file index).
        var owed: [ContentID: [Int: ChunkBitmap]] = [:]
        var pending: [ContentID: PendingAsset] = [:]
        var hadFailures = false
    }

    /// An offer's life, from its arrival to its retirement (when it leaves `offers`). A
    /// Cancel that comes before the plan is carried along and applied once the offer is open:
    /// every accepted asset still owes its one Receipt.
    private enum OfferStage {
        /// Its push's consent is not in yet.
        case awaitingConsent(cancel: String?)
        /// Accepted, waiting its turn to be planned (by arrival).
        case queued(cancel: String?)
        /// Being planned; `known`: the contents that were on their way when the plan was asked for.
        case planning(known: Set<Hash256>, cancel: String?)
        /// Answered: its chunks are owed and its assets pending.
        case open(OpenOffer)
        /// Only inside `withOpenOffer`, so the open offer's tables change in place.
        case modifying

        var isAnswered: Bool { if case .open = self { true } else { false } }
        var isPlanning: Bool { if case .planning = self { true } else { false } }
    }

    private struct Offer {
        let pushID: UInt64
        let assets: [PlacedAsset]
        let byID: [ContentID: Int]
        /// Order of arrival on this connection: offers are planned in it.
        let arrival: Int
        var stage: OfferStage
    }

    /// An offer that has retired: its ID stays used, and chunks the sender had already sent
    /// for it are dropped rather than taken as a violation when it ended before them.
    private enum RetiredOffer {
        case complete
        case dropsLateChunks
    }

    /// A content being received, once per connection however many placements need it.
    private struct Content {
        enum Stage: Equatable {
            /// Chunks still to come (`missing`) and chunks handed to be written whose outcome is
            /// not in (`writing`): verified only once both are zero.
            case receiving(missing: Int, writing: Int)
            case verifying
            case staged
        }

        /// Tells this reception of the content from an earlier one that failed:
        /// a write of the earlier one that lands late does not count here.
        let reception: UInt64
        let carrier: AssetKey
        let carrierFile: Int
        var stage: Stage
        /// Placement files still to be served a copy (or the file itself).
        var consumers: Int
        var waiters: Set<AssetKey>

        /// Still waiting for chunks from its carrier offer.
        var isMissingChunks: Bool { if case let .receiving(missing, _) = stage { missing > 0 } else { false } }
    }

    private var pushes: [UInt64: Push] = [:]
    /// Offers from arrival to retirement.
    private var offers: [UInt64: Offer] = [:]
    private var retired: [UInt64: RetiredOffer] = [:]
    private var arrivals = 0
    private var contents: [Hash256: Content] = [:]
    private var nextReception: UInt64 = 0
    /// Contents taken by installs still landing, with how many: gone from
    /// `contents`, not yet in the library's chunk index. An offer needing one
    /// is planned once they have landed — then its chunks are copied locally
    /// instead of crossing the wire a second time.
    private var landing: [Hash256: Int] = [:]
    /// A hint, not state: where the next offer to plan was last found waiting for a landing
    /// content (asset and file index). `nextPlan` runs after every install and looks there
    /// first instead of going through the whole offer again.
    private var planWait: (offerID: UInt64, asset: Int, file: Int)?

    // MARK: - Bounds (PROTOCOL.md, "Limits and deadlines")

    /// Pushes whose consent is still being decided: each one is a question to a person.
    static let maxUndecidedPushes = 4
    /// Offers sent and not yet answered with an OfferReply.
    static let maxUnansweredOffers = 16
    /// Offers answered whose Receipts are not all sent yet.
    static let maxLiveOffers = 1024
    /// Pushes begun and not ended by their last offer: each is a table entry until then.
    static let maxOpenPushes = 64

    var isIdle: Bool { pushes.isEmpty && offers.isEmpty }

    /// Rules broken on purpose, for the interleaving tests to show they catch them.
    enum PlantedBug: Sendable { case takenWhileOthersStillNeedIt, cancelBeforePlanForgotten }
    var plantedBug: PlantedBug?

    /// Offers waiting for consent or for their plan: none has had its OfferReply.
    private var unansweredOffers: Int {
        offers.values.reduce(0) { $0 + ($1.stage.isAnswered ? 0 : 1) }
    }

    /// Changes an open offer's tables in place: read out of its enum, they would be
    /// copied whole on the first write (copy-on-write), once per chunk — quadratic at a
    /// thousand assets an offer. Nil when the offer is not open.
    private mutating func withOpenOffer<Result>(_ offerID: UInt64, _ body: (inout OpenOffer) -> Result) -> Result? {
        offers.mutateValue(forKey: offerID) { offer -> Result? in
            guard case var .open(open) = offer.stage else { return nil }
            offer.stage = .modifying
            defer { offer.stage = .open(open) }
            return body(&open)
        } ?? nil
    }

    private func openOffer(_ offerID: UInt64) -> OpenOffer? {
        if case let .open(open)? = offers[offerID]?.stage { open } else { nil }
    }

    // MARK: - Offers and consent

    mutating func received(_ offer: WireMessage.Offer) throws(SyncError) -> [Action] {
        guard offers[offer.offerID] == nil, retired[offer.offerID] == nil else {
            throw .protocolViolation("offer \(offer.offerID) sent twice")
        }
        let pushID = offer.push.pushID
        let startsPush = pushID == offer.offerID
        guard offers.count < Self.maxLiveOffers else {
            throw .protocolViolation("more than \(Self.maxLiveOffers) offers open on this connection")
        }
        guard unansweredOffers < Self.maxUnansweredOffers else {
            throw .protocolViolation("more than \(Self.maxUnansweredOffers) offers sent without waiting for their replies")
        }
        if startsPush {
            guard pushes[pushID] == nil else { throw .protocolViolation("push \(pushID) started twice") }
            guard pushes.count < Self.maxOpenPushes else {
                throw .protocolViolation("more than \(Self.maxOpenPushes) pushes open on this connection")
            }
            pushes[pushID] = Push()
        } else {
            guard let push = pushes[pushID], !push.lastSeen else {
                throw .protocolViolation("offer \(offer.offerID) continues push \(pushID), which is not open")
            }
        }
        if offer.push.isLast { pushes[pushID]?.lastSeen = true }
        var byID: [ContentID: Int] = [:]
        for (index, asset) in offer.assets.enumerated() { byID[asset.contentID] = index }
        arrivals += 1
        offers[offer.offerID] = Offer(pushID: pushID, assets: offer.assets, byID: byID, arrival: arrivals, stage: .awaitingConsent(cancel: nil))

        // Hostile names are refused before anyone is asked.
        if let rejection = Self.rejection(of: offer.assets) {
            if startsPush { pushes[pushID]?.consent = .refused(rejection) }
            return [.log("refused offer \(offer.offerID): \(rejection)")] + answer(offer.offerID, .refused, reason: rejection)
        }
        guard let push = pushes[pushID] else { return [] }
        switch push.consent {
        case .pending where startsPush && offer.assets.isEmpty && offer.push.isLast:
            // A push of nothing (the answer to a Pull when nothing is missing): nothing to consent to.
            pushes[pushID]?.consent = .accepted
            return [.announce(pushID: pushID, header: offer.push, firstAssets: [])] + answer(offer.offerID, .accepted, reason: nil)
        case .pending:
            // Every undecided push is a question on someone's screen: a peer may not queue up more.
            if pushes.values.filter(\.isUndecided).count > Self.maxUndecidedPushes {
                let reason = "\(Self.maxUndecidedPushes) pushes from this device are already waiting for an answer"
                pushes[pushID]?.consent = .refused(reason)
                return answer(offer.offerID, .refused, reason: reason)
            }
            return startsPush ? [.announce(pushID: pushID, header: offer.push, firstAssets: offer.assets)] : []
        case .accepted:
            offers[offer.offerID]?.stage = .queued(cancel: nil)
            return nextPlan()
        case let .declined(reason):
            return answer(offer.offerID, .declined, reason: reason)
        case let .refused(reason):
            return answer(offer.offerID, .refused, reason: reason)
        }
    }

    /// Why an offer must be refused before anyone is asked (a hostile name), or nil.
    static func rejection(of assets: [PlacedAsset]) -> String? {
        for asset in assets {
            for placement in asset.placements {
                for file in placement.files {
                    do { _ = try LibraryPath.validate(file.manifest.path) } catch { return error.description }
                }
            }
        }
        return nil
    }

    /// The push's person (or trust policy, or the clock) has answered.
    mutating func decided(pushID: UInt64, accepted: Bool, reason: String = "declined") -> [Action] {
        guard pushes[pushID]?.isUndecided == true else { return [] }
        pushes[pushID]?.consent = accepted ? .accepted : .declined(reason)
        let waiting = offers.filter { $0.value.pushID == pushID }.sorted { $0.value.arrival < $1.value.arrival }
        var actions: [Action] = []
        for (offerID, offer) in waiting {
            guard case let .awaitingConsent(cancel) = offer.stage else { continue }
            if accepted {
                offers[offerID]?.stage = .queued(cancel: cancel)
            } else {
                actions += answer(offerID, .declined, reason: reason)
            }
        }
        return accepted ? nextPlan() : actions
    }

    /// Asks for the plan of the next offer in line, unless one is being planned: one at a time.
    private mutating func nextPlan() -> [Action] {
        guard !offers.values.contains(where: \.stage.isPlanning) else { return [] }
        var next: (offerID: UInt64, offer: Offer, cancel: String?)?
        for (offerID, offer) in offers {
            guard case let .queued(cancel) = offer.stage, offer.arrival < next?.offer.arrival ?? .max else { continue }
            next = (offerID, offer, cancel)
        }
        guard let (offerID, offer, cancel) = next else { return [] }
        if !landing.isEmpty {
            // Planned when those installs are done (`installed`). From where the last look
            // stopped, then (only if that reaches the end) once more from the start: an
            // earlier file's content may have started landing since, for another offer.
            let resume = planWait.flatMap { $0.offerID == offerID ? (asset: $0.asset, file: $0.file) : nil }
            if let found = firstLanding(in: offer.assets, from: resume ?? (0, 0))
                ?? (resume == nil ? nil : firstLanding(in: offer.assets, from: (0, 0))) {
                planWait = (offerID, found.asset, found.file)
                return []
            }
        }
        planWait = nil
        let known = Set(contents.keys)
        offers[offerID]?.stage = .planning(known: known, cancel: cancel)
        return [.plan(offerID: offerID, assets: offer.assets, known: known)]
    }

    /// The first file from `start` on (asset, then file order) whose content is landing.
    private func firstLanding(in assets: [PlacedAsset], from start: (asset: Int, file: Int)) -> (asset: Int, file: Int)? {
        guard start.asset < assets.count else { return nil }
        var file = start.file
        for asset in start.asset..<assets.count {
            let files = assets[asset].files
            while file < files.count {
                if landing[files[file].manifest.fileHash] != nil { return (asset, file) }
                file += 1
            }
            file = 0
        }
        return nil
    }

    /// Answers an offer that will not be planned (declined, refused) and retires it.
    private mutating func answer(_ offerID: UInt64, _ decision: WireMessage.OfferReply.Decision, reason: String?) -> [Action] {
        var actions: [Action] = [.send([.offerReply(.init(offerID: offerID, decision: decision, reason: reason.map { WireText.fitted($0, maxBytes: WireMessage.OfferReply.maxReasonBytes) }))])]
        if decision != .accepted || offers[offerID]?.assets.isEmpty == true {
            actions += retire(offerID)
        }
        return actions
    }

    // MARK: - Planning

    /// The importer's findings for the offer being planned, or why it cannot take it.
    mutating func planned(offerID: UInt64, _ result: Result<Plan, ReceiveError>) -> [Action] {
        guard let offer = offers[offerID], case let .planning(known, cancel) = offer.stage else { return [] }
        let assets = offer.assets
        let plan: Plan
        switch result {
        case let .failure(error):
            return [.log("refused offer \(offerID): \(error)")] + answer(offerID, .refused, reason: error.description) + nextPlan()
        case let .success(found):
            plan = found
        }
        // The plan is made off the receiver's actor, which meanwhile goes on with other events.
        // If a content it counted on as "on its way" is gone since, or a file it looked for in
        // the library started landing, the plan describes a moment that has passed: it is
        // dropped (its partial handles with it) and made again.
        let needed = Set(assets.flatMap { $0.files.map(\.manifest.fileHash) })
        if needed.contains(where: { (known.contains($0) && contents[$0] == nil) || landing[$0] != nil }) {
            offers[offerID]?.stage = .queued(cancel: cancel)
            return plan.missing.keys.sorted().filter { contents[$0] == nil }.map { .discard($0) } + nextPlan()
        }
        // The importer is asked about every content not known here; a gap would be our own bug.
        for asset in assets where plan.refused[asset.contentID] == nil {
            let inPlace = plan.inPlace[asset.contentID]
            for (placementIndex, placement) in asset.placements.enumerated() {
                for (fileIndex, file) in placement.files.enumerated()
                where inPlace?[safe: placementIndex]?[safe: fileIndex] != true
                    && contents[file.manifest.fileHash] == nil && plan.missing[file.manifest.fileHash] == nil {
                    let reason = "internal error: \(file.manifest.fileHash.shortHex) was not planned"
                    return [.log("refused offer \(offerID): \(reason)")] + answer(offerID, .refused, reason: reason) + nextPlan()
                }
            }
        }
        var (actions, newlyComplete) = accept(offerID, plan)
        guard let pushID = offers[offerID]?.pushID else { return actions + nextPlan() }
        // Assets the disk has no room for fail now, each with its Receipt; the rest is taken.
        let refused = assets.filter { plan.refused[$0.contentID] != nil }
        if !refused.isEmpty {
            actions.append(.log("took \(assets.count - refused.count) of the \(assets.count) assets of offer \(offerID); no room for the others"))
            for asset in refused {
                let reason = plan.refused[asset.contentID]?.description ?? "not enough free space"
                actions += fail(AssetKey(offerID: offerID, contentID: asset.contentID), reason: reason)
            }
        }

        // Assets with nothing to wait for land (or are confirmed) at once; receipts of those
        // already in place leave together, as one message batch and one ledger commit.
        var receipts: [WireMessage] = []
        var received: [(content: ContentID, bytes: UInt64)] = []
        let ready = immediatelyReady(offerID)
        for asset in ready.inPlace {
            actions.append(.outcome(pushID: pushID, contentID: asset.contentID, .alreadyPresent(Self.alreadyPresent(asset))))
            receipts.append(.receipt(.init(offerID: offerID, contentID: asset.contentID, outcome: .stored)))
            received.append((asset.contentID, asset.contentSize))
            actions += resolve(AssetKey(offerID: offerID, contentID: asset.contentID), failed: false, sendingReceipt: false)
        }
        for contentID in ready.installable {
            actions += install(AssetKey(offerID: offerID, contentID: contentID))
        }
        if !received.isEmpty { actions.insert(.recordReceived(received), at: min(actions.count, 1)) }
        if !receipts.isEmpty { actions.insert(.send(receipts), at: min(actions.count, 1)) }
        newlyComplete.removeAll { contents[$0] == nil }
        actions += newlyComplete.map { .verify($0) }
        // A Cancel that came while this offer waited for its plan applies now: every accepted
        // asset still owes its one Receipt, a failed one where data will never come.
        if let cancel, plantedBug != .cancelBeforePlanForgotten {
            actions += cancelled(offerID: offerID, reason: cancel)
        }
        return actions + nextPlan()
    }

    /// Records what each asset of the accepted offer waits for and which chunks
    /// it is owed; the reply asking for them is the first action.
    /// - Returns: the reply and progress, and the contents complete without a transfer.
    private mutating func accept(_ offerID: UInt64, _ plan: Plan) -> (actions: [Action], newlyComplete: [Hash256]) {
        guard let offer = offers[offerID] else { return ([], []) }
        var open = OpenOffer()
        var newlyComplete: [Hash256] = []
        var neededBytes: UInt64 = 0
        for asset in offer.assets {
            let key = AssetKey(offerID: offerID, contentID: asset.contentID)
            guard plan.refused[asset.contentID] == nil else {
                // Accepted, so that it is owed a Receipt: a failed one, at once (`planned`).
                open.pending[asset.contentID] = PendingAsset(needs: [], stage: .waiting(for: []))
                continue
            }
            let inPlace = plan.inPlace[asset.contentID]
            var needs: [[Hash256?]] = []
            var waitingFor = Set<Hash256>()
            for (placementIndex, placement) in asset.placements.enumerated() {
                var row: [Hash256?] = []
                for (fileIndex, file) in placement.files.enumerated() {
                    if inPlace?[safe: placementIndex]?[safe: fileIndex] == true {
                        row.append(nil)
                        continue
                    }
                    let hash = file.manifest.fileHash
                    row.append(hash)
                    if contents[hash] == nil, let missing = plan.missing[hash] {
                        nextReception += 1
                        contents[hash] = Content(reception: nextReception, carrier: key, carrierFile: fileIndex,
                                                 stage: missing.count == 0 ? .verifying : .receiving(missing: missing.count, writing: 0),
                                                 consumers: 0, waiters: [])
                        if missing.count == 0 {
                            newlyComplete.append(hash)
                        } else {
                            if open.owed.mutateValue(forKey: asset.contentID, { $0[fileIndex] = missing }) == nil {
                                open.owed[asset.contentID] = [fileIndex: missing]
                            }
                            for chunk in 0..<missing.chunkCount where missing.contains(chunk) {
                                neededBytes += UInt64(file.manifest.chunks[chunk].length)
                            }
                        }
                    }
                    let staged = contents.mutateValue(forKey: hash) { content in
                        content.consumers += 1
                        content.waiters.insert(key)
                        return content.stage == .staged
                    }
                    if staged != true { waitingFor.insert(hash) }
                }
                needs.append(row)
            }
            open.pending[asset.contentID] = PendingAsset(needs: needs, stage: .waiting(for: waitingFor))
        }

        // The reply first: the sender starts sending while we land what is already here.
        var needed: [WireMessage.NeededChunks] = []
        for asset in offer.assets {
            guard let files = open.owed[asset.contentID] else { continue }
            needed.append(.init(contentID: asset.contentID, files: files.keys.sorted().compactMap { index in
                guard let owed = files[index] else { return nil }
                return .init(fileIndex: UInt16(index), chunks: ChunkIndexSet(owed.indices.map { UInt32($0) }))
            }))
        }
        var actions: [Action] = [.send([.offerReply(.init(offerID: offerID, decision: .accepted, needed: needed))])]
        let pushID = offer.pushID
        pushes[pushID]?.progress.bytesTotal += neededBytes
        pushes[pushID]?.progress.assetsTotal += offer.assets.count
        if let progress = pushes[pushID]?.progress { actions.append(.progress(pushID: pushID, progress)) }
        offers[offerID]?.stage = .open(open)
        return (actions, newlyComplete)
    }

    /// The offer's assets that need no chunk: wholly in place, or with every content staged.
    private func immediatelyReady(_ offerID: UInt64) -> (inPlace: [PlacedAsset], installable: [ContentID]) {
        guard let offer = offers[offerID], case let .open(open) = offer.stage else { return ([], []) }
        var ready: (inPlace: [PlacedAsset], installable: [ContentID]) = ([], [])
        for asset in offer.assets {
            guard let pending = open.pending[asset.contentID], case let .waiting(waitingFor) = pending.stage else { continue }
            if pending.needs.allSatisfy({ $0.allSatisfy { $0 == nil } }) {
                ready.inPlace.append(asset)
            } else if waitingFor.isEmpty {
                ready.installable.append(asset.contentID)
            }
        }
        return ready
    }

    private static func alreadyPresent(_ asset: PlacedAsset) -> [InstalledFile] {
        asset.placements.flatMap { placement in
            placement.files.compactMap { file in (try? LibraryPath.validate(file.manifest.path)).map(InstalledFile.alreadyPresent) }
        }
    }

    // MARK: - Chunks

    /// Where a chunk goes, once checked against what was asked for.
    struct ChunkDestination {
        let fileHash: Hash256
        let pushID: UInt64
        fileprivate let reception: UInt64
    }

    /// Checks a chunk against what was asked for and marks it received.
    /// - Returns: where to write it, or nil when it is to be dropped (its
    ///   asset failed here meanwhile, or nobody needs its content any more).
    /// - Throws: a protocol violation for a chunk of an offer not accepted,
    ///   one not asked for (or sent twice), or one of the wrong length.
    mutating func destination(of chunk: WireMessage.Chunk) throws(SyncError) -> ChunkDestination? {
        if case .dropsLateChunks? = retired[chunk.offerID] { return nil }
        // Consent: bytes for an offer nobody accepted are a violation, and end the connection.
        // Read, then changed in place (`withOpenOffer`): an offer copied per chunk would copy
        // its tables every time, which at a thousand assets an offer is quadratic.
        let fileIndex = Int(chunk.fileIndex), chunkIndex = Int(chunk.chunkIndex)
        let (pushID, manifest) = try requested(chunk)
        let expected = Int(manifest.chunks[chunkIndex].length)
        guard chunk.payload.decodedLength == expected else {
            throw .protocolViolation("chunk \(chunkIndex) declares \(chunk.payload.decodedLength) bytes, the manifest says \(expected)")
        }
        // Not `owed[…]?[…]?.remove(…)`: see `mutateValue` (this runs once per chunk).
        withOpenOffer(chunk.offerID) { offer in
            let fileDone = offer.owed.mutateValue(forKey: chunk.contentID) { files -> Bool in
                let emptied = files.mutateValue(forKey: fileIndex) { owed -> Bool in
                    owed.remove(chunkIndex)
                    return owed.count == 0
                } ?? false
                if emptied { files[fileIndex] = nil }
                return emptied && files.isEmpty
            } ?? false
            if fileDone { offer.owed[chunk.contentID] = nil }
        }
        let hash = manifest.fileHash
        let reception = contents.mutateValue(forKey: hash) { content -> UInt64? in
            guard case let .receiving(missing, writing) = content.stage,
                  content.carrier == AssetKey(offerID: chunk.offerID, contentID: chunk.contentID), content.carrierFile == fileIndex
            else { return nil }
            content.stage = .receiving(missing: missing - 1, writing: writing + 1)
            return content.reception
        } ?? nil
        guard let reception else { return nil }
        return ChunkDestination(fileHash: hash, pushID: pushID, reception: reception)
    }

    /// The push and file manifest of a chunk that was asked for; a violation otherwise.
    private func requested(_ chunk: WireMessage.Chunk) throws(SyncError) -> (pushID: UInt64, manifest: FileManifest) {
        guard let offer = offers[chunk.offerID], case let .open(open) = offer.stage else {
            throw .protocolViolation("chunk for offer \(chunk.offerID), which was not accepted")
        }
        let fileIndex = Int(chunk.fileIndex), chunkIndex = Int(chunk.chunkIndex)
        guard open.owed[chunk.contentID]?[fileIndex]?.contains(chunkIndex) == true,
              let assetIndex = offer.byID[chunk.contentID]
        else {
            throw .protocolViolation("chunk \(chunkIndex) of file \(fileIndex) of \(chunk.contentID.hash.shortHex) was not requested")
        }
        return (offer.pushID, offer.assets[assetIndex].files[fileIndex].manifest)
    }

    /// The chunk the session was told to write has been written (or not).
    mutating func chunkWritten(_ destination: ChunkDestination, bytes: Int, _ result: Result<Void, ReceiveError>) -> [Action] {
        let hash = destination.fileHash
        let complete = contents.mutateValue(forKey: hash) { content -> Bool? in
            guard content.reception == destination.reception, case let .receiving(missing, writing) = content.stage else { return nil }
            content.stage = .receiving(missing: missing, writing: writing - 1)
            return missing == 0 && writing - 1 == 0
        } ?? nil
        guard let complete else { return [] }
        if case let .failure(error) = result {
            return failContent(hash, reason: error.description)
        }
        var actions: [Action] = []
        if let progress = pushes.mutateValue(forKey: destination.pushID, { push in
            push.progress.bytesDone += UInt64(bytes)
            return push.progress
        }) {
            actions.append(.progress(pushID: destination.pushID, progress))
        }
        if complete, let carrier = contents.mutateValue(forKey: hash, { content in
            content.stage = .verifying
            return content.carrier.offerID
        }) {
            actions.append(.verify(hash))
            // Its carrier may have been waiting only for this.
            actions += retireIfDone(carrier)
        }
        return actions
    }

    // MARK: - Finishing and installing

    mutating func verified(_ hash: Hash256, _ result: Result<Void, ReceiveError>) -> [Action] {
        guard let content = contents[hash], content.stage == .verifying else { return [] }
        if case let .failure(error) = result {
            return failContent(hash, reason: error.description)
        }
        guard content.consumers > 0 else {
            // Everyone who needed it failed meanwhile.
            contents[hash] = nil
            return [.discard(hash)]
        }
        contents.mutateValue(forKey: hash) { $0.stage = .staged }
        var actions: [Action] = []
        for waiter in content.waiters.sorted(by: Self.arrivalOrder) {
            let ready = withOpenOffer(waiter.offerID) { offer in
                offer.pending.mutateValue(forKey: waiter.contentID) { pending -> Bool in
                    guard case var .waiting(waitingFor) = pending.stage else { return false }
                    waitingFor.remove(hash)
                    pending.stage = .waiting(for: waitingFor)
                    return waitingFor.isEmpty
                }
            } ?? nil
            if ready == true { actions += install(waiter) }
        }
        return actions
    }

    private static func arrivalOrder(_ lhs: AssetKey, _ rhs: AssetKey) -> Bool {
        (lhs.offerID, lhs.contentID) < (rhs.offerID, rhs.contentID)
    }

    /// Every content the asset needs is staged: hand out copies (or the file
    /// itself, to the last that needs it) and land it.
    private mutating func install(_ key: AssetKey) -> [Action] {
        guard let pending = openOffer(key.offerID)?.pending[key.contentID], let (_, asset) = asset(key) else { return [] }
        var sources: [[InstallOrder.Source]] = []
        var taking: [Hash256] = []
        var actions: [Action] = []
        for needs in pending.needs {
            var row: [InstallOrder.Source] = []
            for need in needs {
                guard let hash = need, let consumers = contents.mutateValue(forKey: hash, { content in
                    content.consumers -= 1
                    return content.consumers
                }) else {
                    row.append(.inPlace)
                    continue
                }
                if consumers <= (plantedBug == .takenWhileOthersStillNeedIt ? 1 : 0) {
                    contents[hash] = nil
                    landing[hash, default: 0] += 1
                    taking.append(hash)
                    row.append(.take(hash))
                } else {
                    row.append(.copy(hash))
                }
            }
            sources.append(row)
        }
        withOpenOffer(key.offerID) { offer in
            offer.pending[key.contentID]?.stage = .installing(taking: taking)
        }
        for needs in pending.needs {
            for case let hash? in needs { contents.mutateValue(forKey: hash) { _ = $0.waiters.remove(key) } }
        }
        actions.append(.install(InstallOrder(offerID: key.offerID, asset: asset, sources: sources)))
        return actions
    }

    /// The asset and its push, read without keeping the offer: a copy of the
    /// offer held while its tables change would make them copy themselves
    /// whole (copy-on-write), once per asset — quadratic at a thousand assets.
    private func asset(_ key: AssetKey) -> (pushID: UInt64, asset: PlacedAsset)? {
        guard let offer = offers[key.offerID], let index = offer.byID[key.contentID] else { return nil }
        return (offer.pushID, offer.assets[index])
    }

    mutating func installed(offerID: UInt64, contentID: ContentID, _ result: Result<[InstalledFile], ReceiveError>) -> [Action] {
        let key = AssetKey(offerID: offerID, contentID: contentID)
        guard case let .installing(taking)? = openOffer(offerID)?.pending[contentID]?.stage, let (pushID, asset) = asset(key) else { return [] }
        for hash in taking {
            if let count = landing[hash], count > 1 { landing[hash] = count - 1 } else { landing[hash] = nil }
        }
        var actions: [Action]
        switch result {
        case let .success(files):
            let size = asset.contentSize
            actions = [.outcome(pushID: pushID, contentID: contentID, .stored(files)), .recordReceived([(contentID, size)])]
                + resolve(key, failed: false, sendingReceipt: true)
        case let .failure(error):
            actions = fail(key, reason: error.description)
        }
        return actions + (taking.isEmpty ? [] : nextPlan())
    }

    // MARK: - Failures, cancels, the end

    /// A content cannot be had (bad bytes, a disk error): every asset waiting for it fails.
    private mutating func failContent(_ hash: Hash256, reason: String) -> [Action] {
        guard let content = contents.removeValue(forKey: hash) else { return [] }
        var actions: [Action] = [.discard(hash)]
        for waiter in content.waiters.sorted(by: Self.arrivalOrder) {
            actions += fail(waiter, reason: reason)
        }
        return actions + retireIfDone(content.carrier.offerID)
    }

    /// Fails one asset: its receipt says why, the contents it waited for lose
    /// a consumer (and go, when that was the last).
    private mutating func fail(_ key: AssetKey, reason: String) -> [Action] {
        guard let pending = openOffer(key.offerID)?.pending[key.contentID], let pushID = offers[key.offerID]?.pushID else { return [] }
        var actions: [Action] = [
            .log("failed to receive \(key.contentID.hash.shortHex): \(reason)"),
            .outcome(pushID: pushID, contentID: key.contentID, .failed(reason: reason)),
        ]
        if !pending.isInstalling {
            for needs in pending.needs {
                for case let hash? in needs where contents[hash] != nil {
                    contents[hash]?.consumers -= 1
                    contents[hash]?.waiters.remove(key)
                    // A content being verified stays until its result is in (`verified`): a later
                    // offer needing it joins it instead of starting a second verification of the
                    // same staged file (found by the interleaving tests).
                    if let content = contents[hash], content.consumers <= 0, content.stage != .verifying {
                        contents[hash] = nil
                        // A content still arriving keeps its partial (a later offer resumes from it).
                        if content.stage == .staged { actions.append(.discard(hash)) }
                        if content.carrier.offerID != key.offerID { actions += retireIfDone(content.carrier.offerID) }
                    }
                }
            }
        }
        withOpenOffer(key.offerID) { $0.hadFailures = true }
        actions.append(.send([.receipt(.init(offerID: key.offerID, contentID: key.contentID,
                                             outcome: .failed(reason: WireText.fitted(reason, maxBytes: WireMessage.Receipt.maxReasonBytes))))]))
        return actions + resolve(key, failed: true, sendingReceipt: false)
    }

    /// The asset has its receipt (sent here when `sendingReceipt`): it leaves
    /// its offer, and the offer its push once nothing of it is pending.
    private mutating func resolve(_ key: AssetKey, failed: Bool, sendingReceipt: Bool) -> [Action] {
        guard case .some? = withOpenOffer(key.offerID, { $0.pending.removeValue(forKey: key.contentID) }),
              let pushID = offers[key.offerID]?.pushID else { return [] }
        var actions: [Action] = []
        if sendingReceipt {
            actions.append(.send([.receipt(.init(offerID: key.offerID, contentID: key.contentID, outcome: .stored))]))
        }
        if let progress = pushes.mutateValue(forKey: pushID, { push in
            push.progress.assetsDone += 1
            return push.progress
        }) {
            actions.append(.progress(pushID: pushID, progress))
        }
        actions += retireIfDone(key.offerID)
        return actions
    }

    /// Retires a planned offer once nothing of it is pending and it carries no content
    /// still missing chunks: an offer whose own assets all failed may still carry a
    /// shared sidecar that an asset of a later offer waits for, and its chunks must keep
    /// coming (found by the interleaving tests: the later asset waited for ever).
    private mutating func retireIfDone(_ offerID: UInt64) -> [Action] {
        guard let open = openOffer(offerID), open.pending.isEmpty else { return [] }
        let carrying = contents.values.contains { $0.carrier.offerID == offerID && $0.isMissingChunks }
        return carrying ? [] : retire(offerID)
    }

    /// The offer is fully answered: it leaves its push, and the push ends once
    /// its last offer has come and gone.
    private mutating func retire(_ offerID: UInt64) -> [Action] {
        guard let offer = offers.removeValue(forKey: offerID) else { return [] }
        if case let .open(open) = offer.stage, open.hadFailures || !open.owed.isEmpty {
            retired[offerID] = .dropsLateChunks
        } else {
            retired[offerID] = .complete
        }
        guard pushes[offer.pushID]?.lastSeen == true, !offers.values.contains(where: { $0.pushID == offer.pushID }) else { return [] }
        pushes[offer.pushID] = nil
        return [.pushEnded(pushID: offer.pushID)]
    }

    /// The sender will send no more chunks for this offer. Its assets still
    /// missing anything fail, and so does every content it carried that is
    /// still incomplete (other offers waiting for it included); assets whose
    /// contents are all in are still landed and receipted.
    mutating func cancelled(offerID: UInt64, reason: String) -> [Action] {
        guard let offer = offers[offerID] else { return [] }
        switch offer.stage {
        case .awaitingConsent:
            offers[offerID]?.stage = .awaitingConsent(cancel: reason)
            return []
        case .queued:
            offers[offerID]?.stage = .queued(cancel: reason)
            return []
        case let .planning(known, _):
            offers[offerID]?.stage = .planning(known: known, cancel: reason)
            return []
        case .open, .modifying:
            break
        }
        let assets = offer.assets
        var actions: [Action] = []
        // A content whose every chunk arrived goes on (its last writes may still be landing).
        let carried = contents.filter { $0.value.carrier.offerID == offerID && $0.value.isMissingChunks }.map(\.key)
        for hash in carried.sorted() {
            actions += failContent(hash, reason: "sender cancelled: \(reason)")
        }
        for asset in assets {
            guard case let .waiting(waitingFor)? = openOffer(offerID)?.pending[asset.contentID]?.stage,
                  waitingFor.contains(where: { contents[$0]?.isMissingChunks ?? true })
            else { continue }
            actions += fail(AssetKey(offerID: offerID, contentID: asset.contentID), reason: "sender cancelled: \(reason)")
        }
        return actions
    }

    /// The connection is gone: everything still pending fails (no receipts
    /// can go out any more), every push ends. Partials stay for a later resume.
    mutating func closed(reason: String) -> [Action] {
        var actions: [Action] = []
        for (_, offer) in offers.sorted(by: { $0.key < $1.key }) {
            guard case let .open(open) = offer.stage else { continue }
            for asset in offer.assets where open.pending[asset.contentID] != nil {
                actions.append(.outcome(pushID: offer.pushID, contentID: asset.contentID, .failed(reason: "connection lost: \(reason)")))
            }
        }
        for hash in contents.filter({ $0.value.stage == .staged }).map(\.key).sorted() { actions.append(.discard(hash)) }
        for pushID in pushes.keys.sorted() { actions.append(.pushEnded(pushID: pushID)) }
        pushes = [:]
        offers = [:]
        contents = [:]
        landing = [:]
        planWait = nil
        return actions
    }
}
