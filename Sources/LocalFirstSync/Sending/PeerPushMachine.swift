import Foundation
import LFSyncContent
import LFSyncStore
import LFSyncWire

/// The one place that decides the state of one push towards one peer: which contents
/// are in flight, stored or failed, what the ledger learns, and what the summary says.
/// It does no I/O: `PeerSendJob` drives it — offers, chunks, receipts, timers — and
/// carries out the `Action`s each event returns, and nothing else decides.
///
/// **Ledger rules.** A row that was `synced` before the push stays so whatever the push
/// does: the peer still has what it verified then. Every other row of the push's contents
/// says what the push knows: `inFlight` while an occurrence of the content is unconfirmed;
/// `synced` only once every occurrence sent so far was receipted `stored` (one that turns
/// up again in a later offer goes back to `inFlight`); `failed` as soon as any occurrence
/// failed (and never `synced` after that, in this push); `pending` for what a cancel left
/// unconfirmed. A push that ended has every content either stored or failed, exactly once.
///
/// Only contents in flight are kept per content (`Content`): per-content tables of the
/// whole push would cost tens of megabytes at 200,000 files. A content stored earlier in
/// the push is known from its batch (`Batch.repeated`), a failed one from `failures`.
struct PeerPushMachine {
    /// One offer of the push, as far as the rules care.
    struct Batch: Sendable {
        var offerID: UInt64
        var assets: [(content: ContentID, size: UInt64)]
        /// Contents an earlier offer of this push also carried.
        var repeated: Set<ContentID>
    }

    /// What follows from an event, for the driver to carry out in order.
    enum Action: Sendable {
        /// A ledger change for this peer (see `SyncStateStore.record`), leaving the rows
        /// `keep` names as they are.
        case record(SyncState, [ContentID], reason: String?, keep: LedgerChange.Keep)
        /// Contents confirmed stored, with their sizes: `synced` rows, written together.
        case recordSynced([(content: ContentID, bytes: UInt64)])
    }

    /// A content with receipts still owed in this push.
    private struct Content {
        /// Receipts owed for it, over every offer that carries it.
        var owed: Int
        /// An earlier occurrence was receipted stored and counted in `assetsStored`.
        var countedStored: Bool
    }

    private enum Phase {
        case running
        /// The push ended for this peer; nothing changes any more.
        case ended
    }

    private struct ReceiptKey: Hashable {
        let offerID: UInt64
        let contentID: ContentID
    }

    private var phase = Phase.running
    /// When the push began: rows `synced` before it are the peer's from earlier pushes.
    let startedAt: Date

    init(startedAt: Date = Date()) {
        self.startedAt = startedAt
    }
    private var inFlight: [ContentID: Content] = [:]
    /// Receipts owed by offers sent and not yet received, with each content's size.
    private var owed: [ReceiptKey: UInt64] = [:]
    private var confirmed: [(content: ContentID, bytes: UInt64)] = []
    private(set) var failures: [ContentID: AssetFailure] = [:]
    private(set) var assetsStored = 0
    /// Distinct contents offered (a repeat counts once).
    private(set) var assetsOffered = 0

    var hasEnded: Bool { if case .ended = phase { true } else { false } }

    /// Tests only: breaks one rule on purpose, so that the interleaving test can show it
    /// finds such a bug (`PeerPushMachineInterleavingTests`). Nil in every real push.
    enum PlantedBug: Sendable { case storedRepeatCountedAgain, syncedOnFirstOfSeveralReceipts }
    var plantedBug: PlantedBug?
    /// Whether a receipt is still owed.
    var awaitsReceipts: Bool { !owed.isEmpty }
    var receiptsOwed: Int { owed.count }
    /// Bytes of the contents whose receipts are owed (the receipt deadline grows with them).
    var owedBytes: UInt64 { owed.values.reduce(0, +) }
    /// Offers with receipts still owed.
    var openOffers: [UInt64] { Set(owed.keys.map(\.offerID)).sorted() }
    /// Contents receipted stored whose `synced` rows are not written yet.
    var confirmedCount: Int { confirmed.count }

    // MARK: - Events

    /// An offer went out: its contents are in flight (a row `synced` before the push stays
    /// so; one this push made `synced` goes back to `inFlight` for the new occurrence).
    mutating func offered(_ batch: Batch) -> [Action] {
        guard case .running = phase else { return [] }
        for (content, size) in batch.assets {
            // Owed from now on: receipts may arrive before the driver hears the reply they follow.
            owed[ReceiptKey(offerID: batch.offerID, contentID: content)] = size
            if var entry = inFlight[content] {
                entry.owed += 1
                inFlight[content] = entry
            } else {
                let storedEarlier = batch.repeated.contains(content) && failures[content] == nil
                inFlight[content] = Content(owed: 1, countedStored: storedEarlier && plantedBug != .storedRepeatCountedAgain)
            }
        }
        assetsOffered += batch.assets.count - batch.repeated.count
        // Confirmed but not written yet, and offered again: not every occurrence is stored now.
        if !confirmed.isEmpty, !batch.repeated.isEmpty {
            confirmed.removeAll { batch.repeated.contains($0.content) }
        }
        // A content that already failed in this push stays failed: another occurrence of it
        // cannot make the content as a whole stored any more (found by the interleaving test).
        return record(.inFlight, batch.assets.map(\.content).filter { failures[$0] == nil })
    }

    /// A receipt. Only a peer's confirmation makes a row `synced`, and only once every
    /// occurrence of the content in this push is confirmed; the rows wait in `confirmed`
    /// until the driver commits them (`commitConfirmed`), so a burst of receipts is one
    /// commit. A receipt nobody owes (a duplicate, a late one) changes nothing.
    mutating func received(_ receipt: WireMessage.Receipt) -> [Action] {
        guard case .running = phase,
              let size = owed.removeValue(forKey: ReceiptKey(offerID: receipt.offerID, contentID: receipt.contentID))
        else { return [] }
        let content = receipt.contentID
        switch receipt.outcome {
        case .stored:
            guard var entry = inFlight[content] else { return [] }
            entry.owed -= 1
            if plantedBug == .syncedOnFirstOfSeveralReceipts, entry.owed > 0, failures[content] == nil { confirmed.append((content, size)) }
            if entry.owed > 0 {
                inFlight[content] = entry
            } else {
                inFlight[content] = nil
                if failures[content] == nil {
                    confirmed.append((content, size))
                    if !entry.countedStored { assetsStored += 1 }
                }
            }
            return []
        case let .failed(reason):
            let actions = fail([content], .failed(reason: reason))
            if var entry = inFlight[content] {
                entry.owed -= 1
                inFlight[content] = entry.owed > 0 ? entry : nil
            }
            return actions
        }
    }

    /// Writes the `synced` rows confirmed so far.
    mutating func commitConfirmed() -> [Action] {
        guard !confirmed.isEmpty else { return [] }
        defer { confirmed.removeAll(keepingCapacity: true) }
        return [.recordSynced(confirmed)]
    }

    /// A whole offer ends unsent (declined, refused, not answered): no receipt is owed for
    /// it, and its contents fail. A content it repeats, with no receipt outstanding and no
    /// failure, was counted stored at an earlier occurrence: the content as a whole is not
    /// stored now (counting it both ways made stored + failed exceed the push).
    mutating func ended(_ batch: Batch, _ failure: AssetFailure) -> [Action] {
        guard case .running = phase else { return [] }
        for (content, _) in batch.assets { owed[ReceiptKey(offerID: batch.offerID, contentID: content)] = nil }
        return failUnsent(batch, failure)
    }

    /// An offer the push never made (the connection was cut, the push declined, or the
    /// scan went on after this peer stopped): its contents fail as `ended` says.
    mutating func neverOffered(_ batch: Batch, _ failure: AssetFailure) -> [Action] {
        guard case .running = phase else { return [] }
        assetsOffered += batch.assets.count - batch.repeated.count
        return failUnsent(batch, failure)
    }

    /// Contents that failed on this side (their files changed or could not be read while
    /// being sent), with the reason only this side knows.
    mutating func failedHere(_ reasons: [ContentID: String]) -> [Action] {
        guard case .running = phase else { return [] }
        var actions: [Action] = []
        for (content, reason) in reasons.sorted(by: { $0.key < $1.key }) { actions += fail([content], .sourceChanged(reason: reason)) }
        return actions
    }

    /// Assets the push could not offer at all (too large for any offer), counted failed.
    mutating func unofferable(_ contents: [(content: ContentID, reason: String)]) -> [Action] {
        guard case .running = phase else { return [] }
        var actions: [Action] = []
        for (content, reason) in contents {
            if failures[content] == nil, inFlight[content] == nil { assetsOffered += 1 }
            actions += fail([content], .failed(reason: "not offered: \(reason)"))
        }
        return actions
    }

    /// Every receipt still owed fails: the connection ended, or the peer fell silent.
    mutating func owedReceiptsFail(_ failure: AssetFailure) -> [Action] {
        guard case .running = phase else { return [] }
        let contents = owed.keys.map(\.contentID)
        owed = [:]
        return fail(contents, failure)
    }

    /// The sender cancelled: what was not confirmed counts failed (`.cancelled`) in the
    /// summary, but its ledger row goes back to `pending` (a row already `synced` stays
    /// so): nothing went wrong with it. `notOffered` are the offers never sent.
    /// - Returns: the ledger change, and whether every content was confirmed anyway.
    mutating func cancelled(notOffered: [Batch]) -> (actions: [Action], everythingConfirmed: Bool) {
        guard case .running = phase else { return ([], false) }
        var fresh: [ContentID] = []
        func unconfirmed(_ contents: [ContentID]) {
            for content in contents where failures[content] == nil {
                failures[content] = .cancelled
                fresh.append(content)
                if inFlight[content]?.countedStored == true {
                    inFlight[content]?.countedStored = false
                    assetsStored -= 1
                }
            }
        }
        unconfirmed(owed.keys.map(\.contentID))
        owed = [:]
        // Offer by offer: a content an earlier unsent offer carried is failed by then, and a
        // repeat of it was never counted stored.
        for batch in notOffered {
            assetsOffered += batch.assets.count - batch.repeated.count
            for content in batch.repeated where failures[content] == nil && inFlight[content] == nil { assetsStored -= 1 }
            unconfirmed(batch.assets.map(\.content))
        }
        confirmed.removeAll { fresh.contains($0.content) }
        return (record(.pending, fresh), fresh.isEmpty)
    }

    /// The push is over for this peer: the confirmed rows are written and nothing changes
    /// after this. `stored + failed` is every content offered.
    mutating func end() -> [Action] {
        guard case .running = phase else { return [] }
        let actions = commitConfirmed()
        phase = .ended
        inFlight = [:]
        owed = [:]
        return actions
    }

    // MARK: - Rules

    private mutating func failUnsent(_ batch: Batch, _ failure: AssetFailure) -> [Action] {
        for content in batch.repeated where failures[content] == nil && inFlight[content] == nil {
            assetsStored -= 1
        }
        return fail(batch.assets.map(\.content), failure)
    }

    /// Marks contents failed with this peer — in the summary always, in the ledger unless
    /// the row was synced before the push — once each. A content this push confirmed but
    /// has not written yet is not written `synced` after all.
    private mutating func fail(_ contents: [ContentID], _ failure: AssetFailure) -> [Action] {
        var fresh: [ContentID] = []
        for content in contents where failures[content] == nil {
            failures[content] = failure
            fresh.append(content)
            // An earlier occurrence was counted stored; the content as a whole is not.
            if inFlight[content]?.countedStored == true {
                inFlight[content]?.countedStored = false
                assetsStored -= 1
            }
        }
        if !fresh.isEmpty, !confirmed.isEmpty {
            let failed = Set(fresh)
            confirmed.removeAll { failed.contains($0.content) }
        }
        return record(.failed, fresh, reason: failure.description)
    }

    /// Every row this push writes other than `synced` leaves alone what was synced before it
    /// began: the peer still has what it verified then.
    private func record(_ state: SyncState, _ contents: [ContentID], reason: String? = nil) -> [Action] {
        contents.isEmpty ? [] : [.record(state, contents, reason: reason, keep: .syncedBefore(startedAt))]
    }
}
