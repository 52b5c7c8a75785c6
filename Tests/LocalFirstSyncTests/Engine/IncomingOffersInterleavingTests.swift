import Foundation
import Testing
@testable import LocalFirstSync
@testable import LFSyncContent
@testable import LFSyncCrypto
@testable import LFSyncLanding
@testable import LFSyncSystem
@testable import LFSyncWire

/// `IncomingOffers` driven through generated interleavings, the way `SessionReceiver`
/// drives it but with every outcome chosen by a seeded generator: up to three pushes of
/// up to three offers, contents shared between assets, offers and pushes, placements in
/// place or not, consent given, refused or late, plans that fail or find part of a file
/// already here, chunks written or not, files that verify or not, installs that fail,
/// Cancels for any offer at any moment, chunks that break the rules, results that come
/// twice or after the end, and the connection closing at any point. After every event the
/// invariants hold; where the connection stays up, everything pending is then carried out
/// and every offer must have its answer. A failing case prints its seed; `LFSYNC_SEED=N`
/// replays exactly it, `LFSYNC_TRACE=1` prints every event, `LFSYNC_SEEDS=N` tries N seeds
/// (400 in `make test`).
@Suite struct IncomingOffersInterleavingTests {
    typealias Action = IncomingOffers.Action

    static var seeds: [UInt64] { PeerPushMachineInterleavingTests.seeds }

    @Test func everyInterleavingKeepsTheReceiversRules() {
        for seed in Self.seeds {
            let violations = Self.run(seed: seed, bug: nil).violations
            #expect(violations.isEmpty, "seed \(seed) (replay: LFSYNC_SEED=\(seed)): \(violations.prefix(3))")
            if !violations.isEmpty { return }
        }
    }

    /// The generator is worth something only if it finds bugs: each rule broken on purpose
    /// is caught within the seeds `make test` tries.
    @Test(arguments: [IncomingOffers.PlantedBug.takenWhileOthersStillNeedIt, .cancelBeforePlanForgotten])
    func aPlantedBugIsFound(_ bug: IncomingOffers.PlantedBug) {
        let found = Self.seeds.first { !Self.run(seed: $0, bug: bug).violations.isEmpty }
        #expect(found != nil, "no seed of \(Self.seeds.count) found \(bug)")
    }

    /// The seeds reach every step and every fault: a generator that never gets past
    /// consent would pass everything above.
    @Test func theSeedsReachEveryStep() {
        var totals = World.Coverage()
        for seed in Self.seeds { totals.add(Self.run(seed: seed, bug: nil).coverage) }
        // Floors well below what the 400 seeds reach (stored 626, failed 309, copies 669, takes
        // 534, replans 33, cancels before plan 78, closes 67, drained 226, declined 249, refused 177).
        #expect(totals.storedReceipts > 400 && totals.failedReceipts > 100, "\(totals)")
        #expect(totals.copies > 200 && totals.takes > 300 && totals.replans > 10, "\(totals)")
        #expect(totals.cancelsBeforePlan > 20 && totals.closes > 20 && totals.drained > 150, "\(totals)")
        #expect(totals.declined > 50 && totals.refused > 50, "\(totals)")
    }

    // MARK: - The world around the machine

    struct AssetKey: Hashable, Comparable, CustomStringConvertible {
        let offerID: UInt64
        let contentID: ContentID
        static func < (lhs: Self, rhs: Self) -> Bool { (lhs.offerID, lhs.contentID) < (rhs.offerID, rhs.contentID) }
        var description: String { "\(offerID)/\(contentID.hash.shortHex)" }
    }

    /// What a staged content is, as far as the actions so far tell.
    enum Staging { case verifying, verified, gone }

    /// The session, the sender and the disk, played by the generator; and what the
    /// machine's actions have said so far, to hold them to the rules.
    struct World {
        var machine = IncomingOffers()
        var random: SplitMix64
        var violations: [String] = []
        let trace = ProcessInfo.processInfo.environment["LFSYNC_TRACE"] != nil

        // What the sender will still send, and what is waiting for the disk or a person.
        var offersToSend: [WireMessage.Offer]
        var offers: [UInt64: WireMessage.Offer] = [:]
        var undecided: [UInt64] = []
        var plans: [(offerID: UInt64, assets: [PlacedAsset], known: Set<Hash256>)] = []
        var chunksToSend: [WireMessage.Chunk] = []
        var writes: [(destination: IncomingOffers.ChunkDestination, bytes: Int)] = []
        var verifications: [Hash256] = []
        var installs: [IncomingOffers.InstallOrder] = []
        var closed = false

        // What the actions said.
        var replies: [UInt64: WireMessage.OfferReply.Decision] = [:]
        var receipts: [AssetKey: Int] = [:]
        var storedReceipts = 0
        var recordedReceived = 0
        var planUsed: [UInt64: IncomingOffers.Plan] = [:]
        var installOrdered = Set<AssetKey>()
        var installSucceeded = Set<AssetKey>()
        var staging: [Hash256: Staging] = [:]
        var endedPushes = Set<UInt64>()
        var cancelled = Set<UInt64>()
        var coverage = Coverage()

        /// How far a run got, summed over the seeds by `theSeedsReachEveryStep`.
        struct Coverage: CustomStringConvertible {
            var storedReceipts = 0, failedReceipts = 0, copies = 0, takes = 0, replans = 0
            var cancelsBeforePlan = 0, closes = 0, drained = 0, declined = 0, refused = 0

            mutating func add(_ other: Coverage) {
                storedReceipts += other.storedReceipts; failedReceipts += other.failedReceipts
                copies += other.copies; takes += other.takes; replans += other.replans
                cancelsBeforePlan += other.cancelsBeforePlan; closes += other.closes; drained += other.drained
                declined += other.declined; refused += other.refused
            }

            var description: String {
                "stored \(storedReceipts), failed \(failedReceipts), copies \(copies), takes \(takes), replans \(replans), "
                    + "cancels before plan \(cancelsBeforePlan), closes \(closes), drained \(drained), declined \(declined), refused \(refused)"
            }
        }

        init(seed: UInt64, offers: [WireMessage.Offer]) {
            random = SplitMix64(seed: seed)
            offersToSend = offers
        }

        mutating func roll(_ n: Int) -> Int { Int(random.next() % UInt64(n)) }
        mutating func chance(_ percent: Int) -> Bool { roll(100) < percent }

        mutating func violated(_ rule: String) { violations.append(rule) }

        /// Feeds one event's actions through the rules, and queues the work they ask for.
        mutating func take(_ event: String, _ actions: [Action]) {
            if trace { print("· \(event) → \(actions.map(Self.brief))") }
            for action in actions {
                switch action {
                case let .announce(pushID, _, _):
                    if closed { violated("announce after close") }
                    undecided.append(pushID)
                case let .plan(offerID, assets, known):
                    if closed { violated("plan after close") }
                    if planUsed[offerID] != nil { coverage.replans += 1 }
                    plans.append((offerID, assets, known))
                case let .send(messages):
                    if closed { violated("send after close: \(messages.map(\.type))") }
                    for message in messages { sent(message) }
                case let .verify(hash):
                    if closed { violated("verify after close") }
                    if staging[hash] == .verifying { violated("\(hash.shortHex) verified twice at once") }
                    staging[hash] = .verifying
                    verifications.append(hash)
                case let .install(order):
                    if closed { violated("install after close") }
                    installing(order)
                case let .discard(hash):
                    if staging[hash] == .verified { staging[hash] = .gone }
                case let .progress(pushID, progress):
                    if endedPushes.contains(pushID) { violated("progress for push \(pushID) after its end") }
                    if progress.assetsDone > progress.assetsTotal || progress.bytesDone > progress.bytesTotal {
                        violated("progress beyond its total: \(progress)")
                    }
                case let .outcome(pushID, _, _):
                    if endedPushes.contains(pushID) { violated("outcome for push \(pushID) after its end") }
                case let .recordReceived(contents):
                    if closed { violated("ledger rows after close") }
                    recordedReceived += contents.count
                case let .pushEnded(pushID):
                    if !endedPushes.insert(pushID).inserted { violated("push \(pushID) ended twice") }
                case .log:
                    break
                }
            }
        }

        private mutating func sent(_ message: WireMessage) {
            switch message {
            case let .offerReply(reply):
                if replies[reply.offerID] != nil { violated("offer \(reply.offerID) answered twice") }
                replies[reply.offerID] = reply.decision
                if reply.decision == .declined { coverage.declined += 1 }
                if reply.decision == .refused { coverage.refused += 1 }
                // A sender that cancelled the offer sends none of it.
                guard reply.decision == .accepted, let offer = offers[reply.offerID], !cancelled.contains(reply.offerID) else { return }
                // The sender sends what was asked for, in order.
                for needed in reply.needed {
                    guard let asset = offer.assets.first(where: { $0.contentID == needed.contentID }) else {
                        violated("chunks asked for \(needed.contentID.hash.shortHex), not in offer \(reply.offerID)")
                        continue
                    }
                    for file in needed.files {
                        let manifest = asset.files[Int(file.fileIndex)].manifest
                        for index in file.chunks.ranges.joined() {
                            chunksToSend.append(.init(offerID: reply.offerID, contentID: asset.contentID, fileIndex: file.fileIndex,
                                                      chunkIndex: index, payload: .raw([UInt8](repeating: 7, count: Int(manifest.chunks[Int(index)].length))[...])))
                        }
                    }
                }
            case let .receipt(receipt):
                let key = AssetKey(offerID: receipt.offerID, contentID: receipt.contentID)
                guard replies[receipt.offerID] == .accepted else {
                    violated("receipt for \(key) of an offer not accepted (\(String(describing: replies[receipt.offerID])))")
                    return
                }
                guard offers[receipt.offerID]?.assets.contains(where: { $0.contentID == receipt.contentID }) == true else {
                    violated("receipt for \(key), not in its offer")
                    return
                }
                receipts[key, default: 0] += 1
                if receipts[key] == 2 { violated("\(key) receipted twice") }
                if case .failed = receipt.outcome { coverage.failedReceipts += 1 }
                if case .stored = receipt.outcome {
                    storedReceipts += 1
                    coverage.storedReceipts += 1
                    // Stored: landed by an install that succeeded, or in place already (no install at all).
                    if !installSucceeded.contains(key), installOrdered.contains(key) || !whollyInPlace(key) {
                        violated("\(key) receipted stored without landing")
                    }
                }
            default:
                violated("unexpected message \(message.type)")
            }
        }

        private func whollyInPlace(_ key: AssetKey) -> Bool {
            guard let plan = planUsed[key.offerID], let inPlace = plan.inPlace[key.contentID] else { return false }
            return inPlace.allSatisfy { $0.allSatisfy { $0 } }
        }

        private mutating func installing(_ order: IncomingOffers.InstallOrder) {
            let key = AssetKey(offerID: order.offerID, contentID: order.asset.contentID)
            if !installOrdered.insert(key).inserted { violated("\(key) installed twice") }
            let inPlace = planUsed[order.offerID]?.inPlace[order.asset.contentID]
            for (placement, row) in order.sources.enumerated() {
                for (file, source) in row.enumerated() {
                    switch source {
                    case .inPlace:
                        if inPlace?[safe: placement]?[safe: file] != true { violated("\(key) file \(placement).\(file) lands from nothing") }
                    case let .copy(hash):
                        if staging[hash] != .verified { violated("\(key) copies \(hash.shortHex), which is \(String(describing: staging[hash]))") }
                        coverage.copies += 1
                    case let .take(hash):
                        if staging[hash] != .verified { violated("\(key) takes \(hash.shortHex), which is \(String(describing: staging[hash]))") }
                        staging[hash] = .gone
                        coverage.takes += 1
                    }
                }
            }
            installs.append(order)
        }

        static func brief(_ action: Action) -> String {
            switch action {
            case let .announce(pushID, _, _): "announce \(pushID)"
            case let .plan(offerID, _, known): "plan \(offerID) knowing \(known.count)"
            case let .send(messages): "send " + messages.map { message in
                switch message {
                case let .offerReply(reply): "reply \(reply.offerID) \(reply.decision) \(reply.needed.count)"
                case let .receipt(receipt): "receipt \(receipt.offerID)/\(receipt.contentID.hash.shortHex) \(receipt.outcome)"
                default: "\(message.type)"
                }
            }.joined(separator: ", ")
            case let .verify(hash): "verify \(hash.shortHex)"
            case let .install(order): "install \(order.offerID)/\(order.asset.contentID.hash.shortHex) \(order.sources)"
            case let .discard(hash): "discard \(hash.shortHex)"
            case let .progress(pushID, progress): "progress \(pushID) \(progress.assetsDone)/\(progress.assetsTotal)"
            case let .outcome(pushID, contentID, outcome): "outcome \(pushID)/\(contentID.hash.shortHex) \(outcome)"
            case let .recordReceived(contents): "record \(contents.count)"
            case let .pushEnded(pushID): "end \(pushID)"
            case let .log(line): "log \(line)"
            }
        }
    }

    // MARK: - The generated offers

    /// Up to three pushes of up to three offers; assets drawn from a small pool, so contents
    /// repeat across offers and pushes, sidecars are shared, and copies stand at two paths.
    static func offers(_ random: inout SplitMix64) -> [WireMessage.Offer] {
        func roll(_ n: Int) -> Int { Int(random.next() % UInt64(n)) }
        var fileContents: [[ChunkRef]] = []
        for content in 0..<6 {
            var chunks: [ChunkRef] = []
            for chunk in 0..<(1 + roll(3)) {
                let byte = UInt8(content * 8 + chunk + 1)
                let hash = Hash256(bytes: [UInt8](repeating: byte, count: 32))!
                chunks.append(ChunkRef(length: UInt32(100 + chunk), hash: hash))
            }
            fileContents.append(chunks)
        }
        // An asset kind: a primary content and maybe a sidecar content (shared by several kinds).
        let kinds: [(primary: Int, sidecar: Int?)] = (0..<6).map { kind in (kind, roll(2) == 0 ? 4 + roll(2) : nil) }
        var offers: [WireMessage.Offer] = []
        var offerID: UInt64 = 1
        var pathNumber = 0
        for _ in 0..<(1 + roll(3)) {
            let pushID = offerID
            let offerCount = 1 + roll(3)
            for position in 0..<offerCount {
                var chosen = Set<Int>()
                for _ in 0..<(1 + roll(3)) { chosen.insert(roll(kinds.count)) }
                let assets: [PlacedAsset] = chosen.sorted().compactMap { kind in
                    let placements = (0..<(1 + roll(2))).map { _ -> Asset in
                        pathNumber += 1
                        // Now and then a name no receiver may write: the offer is refused.
                        let folder = roll(40) == 0 ? "../escape" : "p\(pathNumber)"
                        var files = [Asset.File(role: .primary, manifest: manifest("\(folder)/IMG.HEIC", fileContents[kinds[kind].primary]))]
                        if let sidecar = kinds[kind].sidecar {
                            files.append(.init(role: .sidecar, manifest: manifest("\(folder)/IMG.AAE", fileContents[sidecar])))
                        }
                        return Asset(files: files)
                    }
                    return PlacedAsset(placements: placements)
                }
                offers.append(.init(offerID: offerID, push: .init(pushID: pushID, isLast: position == offerCount - 1, fileCount: 0, byteCount: 0),
                                    assets: assets))
                offerID += 1
            }
        }
        return offers
    }

    static func manifest(_ path: String, _ chunks: [ChunkRef]) -> FileManifest {
        FileManifest(path: RelativePath(path), size: chunks.reduce(0) { $0 + UInt64($1.length) }, modificationTimeNs: 0, chunks: chunks)
    }

    /// What the importer might find: some files already in place, some contents partly
    /// or wholly in staging already.
    static func plan(_ assets: [PlacedAsset], known: Set<Hash256>, _ world: inout World) -> IncomingOffers.Plan {
        var plan = IncomingOffers.Plan()
        for asset in assets {
            var inPlace: [[Bool]] = []
            for placement in asset.placements {
                var row: [Bool] = []
                for file in placement.files {
                    let here = world.chance(15)
                    row.append(here)
                    let hash = file.manifest.fileHash
                    guard !here, !known.contains(hash), plan.missing[hash] == nil else { continue }
                    var missing = ChunkBitmap(chunkCount: file.manifest.chunks.count)
                    let partly = world.chance(20)
                    for index in file.manifest.chunks.indices where !partly || world.chance(50) { missing.insert(index) }
                    plan.missing[hash] = missing
                }
                inPlace.append(row)
            }
            plan.inPlace[asset.contentID] = inPlace
        }
        return plan
    }

    // MARK: - A run

    static func run(seed: UInt64, bug: IncomingOffers.PlantedBug?) -> World {
        var generator = SplitMix64(seed: seed)
        var world = World(seed: generator.next(), offers: offers(&generator))
        world.machine.plantedBug = bug
        for step in 0..<400 {
            guard step < 400, world.violations.isEmpty else { break }
            if !faultyStep(&world) { break }
        }
        if world.violations.isEmpty, !world.closed {
            world.coverage.drained += 1
            drain(&world)
        }
        return world
    }

    /// One event, chosen at random among those that can happen now (faults included).
    /// False when nothing is left to happen.
    static func faultyStep(_ world: inout World) -> Bool {
        var choices: [Int] = []
        if !world.closed, !world.offersToSend.isEmpty { choices += [0, 0] }
        if !world.undecided.isEmpty { choices += [1] }
        if !world.plans.isEmpty { choices += [2, 2] }
        if !world.closed, !world.chunksToSend.isEmpty { choices += [3, 3, 3] }
        if !world.writes.isEmpty { choices += [4, 4] }
        if !world.verifications.isEmpty { choices += [5, 5] }
        if !world.installs.isEmpty { choices += [6, 6] }
        guard !choices.isEmpty else { return false }
        // Rarer: a Cancel, a rule-breaking chunk, a stale result, the connection closing.
        switch world.roll(200) {
        case 0..<6 where !world.closed && !world.offers.isEmpty:
            let offerID = world.offers.keys.sorted()[world.roll(world.offers.count)]
            world.chunksToSend.removeAll { $0.offerID == offerID }
            world.cancelled.insert(offerID)
            if world.replies[offerID] == nil { world.coverage.cancelsBeforePlan += 1 }
            world.take("cancel \(offerID)", world.machine.cancelled(offerID: offerID, reason: "sender cancelled"))
        case 6..<9 where !world.closed:
            badChunk(&world)
        case 9..<17:
            staleResult(&world)
        case 17..<19 where !world.closed:
            world.closed = true
            world.coverage.closes += 1
            world.take("close", [])
            let actions = world.machine.closed(reason: "gone")
            world.take("closed", actions.filter { if case .send = $0 { false } else { true } })
            if actions.contains(where: { if case .send = $0 { true } else { false } }) { world.violated("close sends") }
        default:
            perform(choices[world.roll(choices.count)], &world, faults: true)
        }
        return true
    }

    /// Everything pending is carried out without faults until nothing is left; then every
    /// offer must be answered, every accepted asset receipted once, every push ended.
    static func drain(_ world: inout World) {
        for _ in 0..<10_000 {
            guard world.violations.isEmpty else { return }
            let ready = [0, 1, 2, 3, 4, 5, 6].first { kind in
                switch kind {
                case 0: !world.offersToSend.isEmpty
                case 1: !world.undecided.isEmpty
                case 2: !world.plans.isEmpty
                case 3: !world.chunksToSend.isEmpty
                case 4: !world.writes.isEmpty
                case 5: !world.verifications.isEmpty
                default: !world.installs.isEmpty
                }
            }
            guard let ready else { break }
            perform(ready, &world, faults: false)
        }
        for (offerID, offer) in world.offers.sorted(by: { $0.key < $1.key }) {
            guard let decision = world.replies[offerID] else {
                world.violated("offer \(offerID) never answered")
                continue
            }
            guard decision == .accepted else { continue }
            for asset in offer.assets where world.receipts[AssetKey(offerID: offerID, contentID: asset.contentID)] == nil {
                world.violated("\(AssetKey(offerID: offerID, contentID: asset.contentID)) never receipted")
            }
        }
        let pushes = Set(world.offers.values.map(\.push.pushID))
        if pushes != world.endedPushes { world.violated("pushes never ended: \(pushes.subtracting(world.endedPushes).sorted())") }
        if world.storedReceipts != world.recordedReceived {
            world.violated("\(world.storedReceipts) stored receipts, \(world.recordedReceived) ledger rows")
        }
        if !world.machine.isIdle { world.violated("not idle after everything ended") }
    }

    static func perform(_ kind: Int, _ world: inout World, faults: Bool) {
        switch kind {
        case 0:
            let offer = world.offersToSend.removeFirst()
            world.offers[offer.offerID] = offer
            do {
                world.take("offer \(offer.offerID)", try world.machine.received(offer))
            } catch {
                world.violated("a valid offer \(offer.offerID) broke the connection: \(error)")
            }
        case 1:
            let pushID = world.undecided.remove(at: faults ? world.roll(world.undecided.count) : 0)
            let accepted = !faults || world.chance(80)
            world.take("decided \(pushID) \(accepted)", world.machine.decided(pushID: pushID, accepted: accepted))
        case 2:
            let request = world.plans.removeFirst()
            if faults, world.chance(8) {
                world.take("plan \(request.offerID) failed", world.machine.planned(offerID: request.offerID, .failure(.libraryUnavailable("disk gone"))))
            } else {
                let plan = Self.plan(request.assets, known: request.known, &world)
                world.planUsed[request.offerID] = plan
                world.take("planned \(request.offerID)", world.machine.planned(offerID: request.offerID, .success(plan)))
            }
        case 3:
            let chunk = world.chunksToSend.removeFirst()
            do {
                let destination = try world.machine.destination(of: chunk)
                if world.trace {
                    print("· chunk \(chunk.offerID)/\(chunk.contentID.hash.shortHex) file \(chunk.fileIndex) #\(chunk.chunkIndex) → "
                        + (destination.map { "write \($0.fileHash.shortHex)" } ?? "dropped"))
                }
                if let destination { world.writes.append((destination, Int(chunk.payload.decodedLength))) }
            } catch {
                world.violated("a requested chunk \(chunk.offerID)/\(chunk.chunkIndex) broke the connection: \(error)")
            }
        case 4:
            let write = world.writes.removeFirst()
            let result: Result<Void, ReceiveError> = faults && world.chance(4) ? .failure(.libraryUnavailable("write failed")) : .success(())
            world.take("written \(write.destination.fileHash.shortHex)", world.machine.chunkWritten(write.destination, bytes: write.bytes, result))
        case 5:
            let hash = world.verifications.remove(at: faults ? world.roll(world.verifications.count) : 0)
            let good = !faults || world.chance(93)
            if good, world.staging[hash] == .verifying { world.staging[hash] = .verified }
            if !good, world.staging[hash] == .verifying { world.staging[hash] = .gone }
            world.take("verified \(hash.shortHex) \(good)", world.machine.verified(hash, good ? .success(()) : .failure(.partialTaken(fileHash: hash))))
        default:
            let order = world.installs.removeFirst()
            let key = AssetKey(offerID: order.offerID, contentID: order.asset.contentID)
            let good = !faults || world.chance(93)
            if good { world.installSucceeded.insert(key) }
            world.take("installed \(key) \(good)", world.machine.installed(
                offerID: order.offerID, contentID: order.asset.contentID, good ? .success([]) : .failure(.libraryUnavailable("install failed"))))
        }
    }

    /// A chunk the sender was not asked for, or one asked for but sent twice: the machine
    /// must refuse it (the session then drops the connection).
    static func badChunk(_ world: inout World) {
        guard let (offerID, offer) = world.offers.randomElement(using: &world.random), let asset = offer.assets.first else { return }
        let chunk = WireMessage.Chunk(offerID: offerID, contentID: asset.contentID, fileIndex: 0, chunkIndex: 99, payload: .raw([1, 2, 3][...]))
        do {
            // Dropped is fine (an offer that ended with failures drops what was already on its way).
            if try world.machine.destination(of: chunk) != nil { world.violated("chunk 99 of offer \(offerID), never asked for, was taken") }
        } catch {
            world.closed = true
            let actions = world.machine.closed(reason: "\(error)")
            world.take("bad chunk → closed", actions.filter { if case .send = $0 { false } else { true } })
        }
    }

    /// A result for something that is not waiting for one: a second verification, an
    /// install nobody ordered, a plan for an offer not being planned. Nothing may follow.
    static func staleResult(_ world: inout World) {
        let offerID = UInt64(1 + world.roll(9))
        let before = world.violations.count
        let actions: [Action]
        switch world.roll(3) {
        case 0:
            let hash = Hash256(bytes: [UInt8](repeating: 0xAB, count: 32))!
            actions = world.machine.verified(hash, .success(()))
        case 1:
            let content = ContentID(hash: Hash256(bytes: [UInt8](repeating: 0xCD, count: 32))!)
            actions = world.machine.installed(offerID: offerID, contentID: content, .success([]))
        default:
            guard !world.plans.contains(where: { $0.offerID == offerID }) else { return }
            actions = world.machine.planned(offerID: offerID, .success(IncomingOffers.Plan()))
        }
        if !actions.isEmpty { world.violated("a stale result had effects: \(actions.map(World.brief))") }
        _ = before
    }
}
