import Foundation
import Testing
@testable import LocalFirstSync
@testable import LFSyncContent
@testable import LFSyncCrypto
@testable import LFSyncStore
@testable import LFSyncSystem
@testable import LFSyncWire

/// `PeerPushMachine` driven through generated interleavings: pushes of several offers with
/// contents repeated across them, receipts stored, failed, duplicated, late or for offers
/// that never were, replies declined, refused or unanswered, files that fail on this side,
/// commits at any moment, and endings of every kind (all receipted, connection cut, the
/// peer falling silent, the sender cancelling) at any point — for several peers at once,
/// each with its own machine and one shared ledger. After every event the invariants
/// hold; a failing case prints its seed, `LFSYNC_SEED=N` replays exactly it, and
/// `LFSYNC_TRACE=1` prints every event and the actions it returned. `LFSYNC_SEEDS=N` tries
/// N seeds (400 in `make test`; 20,000 pass by hand). Bugs it found in the rules as they
/// were: a content failed in the push and offered again went back to `inFlight` for good;
/// a content confirmed but not yet written was written `synced` after a later occurrence
/// failed, was cancelled, or was offered again; a cancelled push counted a repeat stored.
@Suite struct PeerPushMachineInterleavingTests {
    /// Seeds a `make test` run tries; `LFSYNC_SEEDS=N` tries more by hand.
    static let seedCount = Int(ProcessInfo.processInfo.environment["LFSYNC_SEEDS"] ?? "") ?? 400

    static var seeds: [UInt64] {
        if let one = ProcessInfo.processInfo.environment["LFSYNC_SEED"].flatMap(UInt64.init) { return [one] }
        return (0..<UInt64(seedCount)).map { $0 &* 0x9E37_79B9 &+ 17 }
    }

    @Test func everyInterleavingKeepsTheLedgerRules() {
        for seed in Self.seeds {
            let violations = Self.run(seed: seed, bug: nil)
            #expect(violations.isEmpty, "seed \(seed) (replay: LFSYNC_SEED=\(seed)): \(violations.prefix(3))")
            if !violations.isEmpty { return }
        }
    }

    /// The generator is worth something only if it finds bugs: each rule broken on purpose
    /// is caught within the seeds `make test` tries.
    @Test(arguments: [PeerPushMachine.PlantedBug.storedRepeatCountedAgain, .syncedOnFirstOfSeveralReceipts])
    func aPlantedBugIsFound(_ bug: PeerPushMachine.PlantedBug) {
        let found = Self.seeds.first { !Self.run(seed: $0, bug: bug).isEmpty }
        #expect(found != nil, "no seed of \(Self.seeds.count) found \(bug)")
    }

    // MARK: - The model

    /// One peer's push as the generator plays it.
    struct PeerRun {
        var machine = PeerPushMachine()
        var peer: PeerKey
        /// Stored receipts owed per (offer, content) the peer will answer, and the failures it will send.
        var pendingReceipts: [(offerID: UInt64, content: ContentID, stored: Bool)] = []
        /// Occurrences offered and not yet receipted stored, per content.
        var unconfirmed: [ContentID: Int] = [:]
        var failedHere: Set<ContentID> = []
        var offeredBatches = 0
        var ended = false
    }

    /// The ledger as `SyncStateStore` keeps it: a state per (peer, content), and whether a
    /// `synced` row became so before the push (its time is then before the push began).
    struct Ledger {
        var rows: [PeerKey: [ContentID: SyncState]] = [:]
        var syncedBeforePush: [PeerKey: Set<ContentID>] = [:]

        mutating func apply(_ actions: [PeerPushMachine.Action], peer: PeerKey) {
            for action in actions {
                switch action {
                case let .record(state, contents, _, keep):
                    for content in contents {
                        let synced = rows[peer]?[content] == .synced
                        switch keep {
                        case .synced where synced: continue
                        case .syncedBefore where synced && syncedBeforePush[peer, default: []].contains(content): continue
                        default: break
                        }
                        rows[peer, default: [:]][content] = state
                        syncedBeforePush[peer]?.remove(content)
                    }
                case let .recordSynced(entries):
                    for entry in entries { rows[peer, default: [:]][entry.content] = .synced }
                }
            }
        }
    }

    /// Plays one generated push to 1–3 peers; returns every invariant broken, in order.
    static func run(seed: UInt64, bug: PeerPushMachine.PlantedBug?) -> [String] {
        var random = SplitMix64(seed: seed)
        func roll(_ n: Int) -> Int { Int(random.next() % UInt64(n)) }
        func chance(_ percent: Int) -> Bool { roll(100) < percent }

        // A pool of contents; a push of 1–6 offers, each of distinct contents, repeats across offers.
        let pool = (0..<10).map { ContentID(hash: Hash256(bytes: [UInt8](repeating: UInt8($0 + 1), count: 32))!) }
        var seen = Set<ContentID>()
        var batches: [PeerPushMachine.Batch] = []
        for index in 0..<(1 + roll(6)) {
            // Sorted: a Set's order changes from run to run, and a seed must replay exactly.
            let contents = Array(Set((0..<(1 + roll(5))).map { _ in pool[roll(pool.count)] })).sorted()
            let repeated = Set(contents.filter { seen.contains($0) })
            seen.formUnion(contents)
            batches.append(.init(offerID: UInt64(100 + index), assets: contents.map { ($0, UInt64(1000)) }, repeated: repeated))
        }
        let unofferable = chance(20) ? [(content: ContentID(hash: Hash256(bytes: [UInt8](repeating: 0xEE, count: 32))!), reason: "too large")] : []
        let pushContents = seen.union(unofferable.map(\.content))

        var ledger = Ledger()
        var violations: [String] = []
        var peers = (0..<(1 + roll(3))).map { PeerRun(peer: PeerKey("peer\($0)")) }
        for index in peers.indices {
            peers[index].machine.plantedBug = bug
            // Some contents the peer holds from an earlier push.
            for content in pool where chance(20) {
                ledger.rows[peers[index].peer, default: [:]][content] = .synced
                ledger.syncedBeforePush[peers[index].peer, default: []].insert(content)
            }
        }
        let syncedBefore = ledger.rows

        func check(_ run: PeerRun, _ actions: [PeerPushMachine.Action], after event: String) {
            for action in actions {
                guard case let .recordSynced(entries) = action else { continue }
                for entry in entries {
                    if run.unconfirmed[entry.content, default: 0] > 0 {
                        violations.append("\(run.peer): \(entry.content.hash.shortHex) synced with \(run.unconfirmed[entry.content]!) occurrence(s) unconfirmed, after \(event)")
                    }
                    if run.machine.failures[entry.content] != nil {
                        violations.append("\(run.peer): \(entry.content.hash.shortHex) synced although failed, after \(event)")
                    }
                }
            }
            if run.ended, !actions.isEmpty { violations.append("\(run.peer): actions after the end (\(event))") }
        }

        let trace = ProcessInfo.processInfo.environment["LFSYNC_TRACE"] != nil
        func step(_ index: Int, _ event: String, _ body: (inout PeerPushMachine) -> [PeerPushMachine.Action]) {
            let actions = body(&peers[index].machine)
            if trace { print("\(peers[index].peer) \(event): \(actions.map { "\($0)".replacingOccurrences(of: "LFSyncContent.ContentID", with: "") })") }
            check(peers[index], actions, after: event)
            ledger.apply(actions, peer: peers[index].peer)
        }

        // Every peer plays its own interleaving of the same push.
        for index in peers.indices {
            let ending = roll(4)  // 0: all through, 1: cut, 2: silence, 3: cancel
            let stopAt = roll(batches.count + 1)
            var replied = 0
            while !peers[index].ended {
                // What may happen next: offer the next batch, answer one, deliver a receipt, commit, stop.
                let choice = roll(10)
                if choice < 3, peers[index].offeredBatches < batches.count, peers[index].offeredBatches < replied + 3,
                   ending == 0 || peers[index].offeredBatches < stopAt {
                    let batch = batches[peers[index].offeredBatches]
                    step(index, "offer \(batch.offerID)") { $0.offered(batch) }
                    for (content, _) in batch.assets { peers[index].unconfirmed[content, default: 0] += 1 }
                    peers[index].offeredBatches += 1
                } else if choice < 5, replied < peers[index].offeredBatches {
                    let batch = batches[replied]
                    replied += 1
                    switch roll(10) {
                    case 0: step(index, "declined \(batch.offerID)") { $0.ended(batch, .declined(reason: "no")) }
                    case 1: step(index, "refused \(batch.offerID)") { $0.ended(batch, .refused(reason: "full")) }
                    case 2: step(index, "no answer \(batch.offerID)") { $0.ended(batch, .timedOut(reason: "silent")) }
                    default:
                        var fails: [ContentID: String] = [:]
                        for (content, _) in batch.assets {
                            if chance(8) { fails[content] = "changed" }
                            let stored = chance(85)
                            peers[index].pendingReceipts.append((batch.offerID, content, stored))
                            if chance(5) { peers[index].pendingReceipts.append((batch.offerID, content, stored)) }  // a duplicate
                        }
                        if !fails.isEmpty { step(index, "failed here in \(batch.offerID)") { $0.failedHere(fails) } }
                    }
                } else if choice < 8, !peers[index].pendingReceipts.isEmpty {
                    let receipt = peers[index].pendingReceipts.remove(at: roll(peers[index].pendingReceipts.count))
                    let message = WireMessage.Receipt(offerID: receipt.offerID, contentID: receipt.content,
                                                      outcome: receipt.stored ? .stored : .failed(reason: "hash mismatch"))
                    let owedBefore = peers[index].machine.receiptsOwed
                    step(index, "receipt \(receipt.offerID)/\(receipt.content.hash.shortHex)") { $0.received(message) }
                    if receipt.stored, peers[index].machine.receiptsOwed < owedBefore {
                        peers[index].unconfirmed[receipt.content, default: 0] -= 1
                    }
                } else if choice == 8 {
                    step(index, "commit") { $0.commitConfirmed() }
                    if chance(30) {  // a receipt for an offer that never was
                        step(index, "stray receipt") { $0.received(.init(offerID: 999, contentID: pool[0], outcome: .stored)) }
                    }
                } else {
                    let offeredAll = peers[index].offeredBatches == batches.count || (ending != 0 && peers[index].offeredBatches >= stopAt)
                    let answeredAll = replied == peers[index].offeredBatches && peers[index].pendingReceipts.isEmpty
                    guard ending != 0 || (offeredAll && answeredAll) else { continue }
                    let rest = Array(batches[peers[index].offeredBatches...])
                    switch ending {
                    case 1, 2:
                        let failure: AssetFailure = ending == 1 ? .connectionLost(reason: "cut") : .timedOut(reason: "silent")
                        step(index, "owed receipts fail") { $0.owedReceiptsFail(failure) }
                        for batch in rest { step(index, "never offered \(batch.offerID)") { $0.neverOffered(batch, failure) } }
                    case 3:
                        step(index, "cancelled") { $0.cancelled(notOffered: rest).actions }
                    default:
                        break
                    }
                    step(index, "unofferable") { $0.unofferable(unofferable) }
                    step(index, "end") { $0.end() }
                    peers[index].ended = true
                    // Anything after the end changes nothing.
                    step(index, "late receipt") { $0.received(.init(offerID: batches[0].offerID, contentID: batches[0].assets[0].content, outcome: .stored)) }
                    step(index, "late failure") { $0.owedReceiptsFail(.connectionLost(reason: "late")) }
                }
            }
            let machine = peers[index].machine
            if machine.assetsStored + machine.failures.count != pushContents.count {
                violations.append("\(peers[index].peer): stored \(machine.assetsStored) + failed \(machine.failures.count) ≠ \(pushContents.count) assets")
            }
            for content in pushContents {
                let row = ledger.rows[peers[index].peer]?[content]
                if row == .inFlight { violations.append("\(peers[index].peer): \(content.hash.shortHex) still in flight after the end") }
                if syncedBefore[peers[index].peer]?[content] == .synced, row != .synced {
                    violations.append("\(peers[index].peer): \(content.hash.shortHex) was synced before the push and is now \(String(describing: row))")
                }
                if machine.failures[content] == nil, row != .synced {
                    violations.append("\(peers[index].peer): \(content.hash.shortHex) counted stored but its row is \(String(describing: row))")
                }
                if machine.failures[content] != nil, row == .synced, !ledger.syncedBeforePush[peers[index].peer, default: []].contains(content) {
                    violations.append("\(peers[index].peer): \(content.hash.shortHex) failed in the push but its row says synced")
                }
            }
            // No other peer's rows moved while this one ran.
            for other in peers.indices where other > index {
                if ledger.rows[peers[other].peer] != syncedBefore[peers[other].peer] {
                    violations.append("\(peers[index].peer)'s push changed \(peers[other].peer)'s rows")
                }
            }
        }
        return violations
    }
}
