import Synchronization
import LFSyncSystem

/// A send to one or more peers: an AsyncSequence of per-peer updates, and
/// `waitUntilCompleted()` for the per-peer outcome. Each update is about one
/// peer; nothing is ever averaged across peers.
public final class OutgoingTransfer: AsyncSequence, Sendable {
    public typealias Element = TransferUpdate

    private struct State {
        var latest: [Peer: TransferUpdate] = [:]
        var summaries: [Peer: PeerTransferSummary] = [:]
        var expectedPeers: Int
        var continuations: [AsyncStream<TransferUpdate>.Continuation] = []
        var history: [TransferUpdate] = []
        var cancelled = false
        var cancelHandlers: [@Sendable () -> Void] = []
    }

    private let state: LockedState<State>
    /// Every peer's summary, once the last peer has finished.
    private let completed = Eventual<[PeerTransferSummary]>()
    private let reader = LockedState<BroadcastChunkReader?>(nil)

    /// The reader shared by every peer of this transfer (tests check it reads each chunk once).
    var chunkReader: BroadcastChunkReader? {
        get { reader.withLock { $0 } }
        set { reader.withLock { $0 = newValue } }
    }

    init(peerCount: Int) {
        state = LockedState(State(expectedPeers: peerCount))
        if peerCount == 0 { completed.resolve([]) }
    }

    /// Iterating a transfer (`for await update in transfer`) follows its updates.
    /// Cancelling the task that iterates cancels the transfer (see `cancel()`);
    /// merely leaving the loop early does not.
    public func makeAsyncIterator() -> Iterator {
        Iterator(base: updates().makeAsyncIterator(), transfer: self)
    }

    public struct Iterator: AsyncIteratorProtocol {
        var base: AsyncStream<TransferUpdate>.Iterator
        let transfer: OutgoingTransfer

        public mutating func next() async -> TransferUpdate? {
            var base = self.base
            let transfer = self.transfer
            let update = await withTaskCancellationHandler {
                await base.next()
            } onCancel: {
                transfer.requestCancel()
            }
            self.base = base
            return update
        }
    }

    /// Every update so far, then live ones, until every peer has finished.
    public func updates() -> AsyncStream<TransferUpdate> {
        let (stream, continuation) = AsyncStream<TransferUpdate>.makeStream()
        let finished: Bool = state.withLock { state in
            for update in state.history { continuation.yield(update) }
            let done = state.summaries.count >= state.expectedPeers
            if !done { state.continuations.append(continuation) }
            return done
        }
        if finished { continuation.finish() }
        return stream
    }

    /// The latest update per peer.
    public var latestUpdates: [TransferUpdate] {
        state.withLock { Array($0.latest.values) }
    }

    /// The summaries if every peer's side has ended, without waiting.
    var summariesIfCompleted: [PeerTransferSummary]? { completed.value }

    /// Waits until every peer's side has ended; one summary per peer, sorted by peer name.
    /// Cancelling the waiting task cancels the transfer (see `cancel()`); the summaries
    /// then still arrive, each `.cancelled` unless that peer had already finished.
    public func waitUntilCompleted() async -> [PeerTransferSummary] {
        await withTaskCancellationHandler {
            await completed.wait()
        } onCancel: {
            requestCancel()
        }
    }

    /// Stops the transfer for every peer still sending: no more offers or chunks, each
    /// peer is told (a Cancel per open offer, so it stops waiting), and every asset not
    /// yet confirmed is left `pending` in the ledger — not `failed`: nothing went wrong,
    /// it was just not sent this time. Returns once every peer's side has ended (its
    /// summary says `.cancelled` unless it had finished). Idempotent.
    /// - Throws: `CancellationError` when the task waiting here is cancelled first (the
    ///   transfer is cancelled all the same).
    public func cancel() async throws {
        requestCancel()
        try await withTaskCancellationHandler {
            _ = await completed.wait()
        } onCancel: {}
        try Task.checkCancellation()
    }

    /// Cancels without waiting (see `cancel()`): for a cancellation handler, which cannot wait.
    func requestCancel() {
        let handlers = state.withLock { state -> [@Sendable () -> Void] in
            guard !state.cancelled else { return [] }
            state.cancelled = true
            defer { state.cancelHandlers = [] }
            return state.cancelHandlers
        }
        for handler in handlers { handler() }
    }

    public var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Runs `handler` once when the transfer is cancelled (at once if it already is).
    func onCancel(_ handler: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            if state.cancelled { return true }
            state.cancelHandlers.append(handler)
            return false
        }
        if now { handler() }
    }

    func publish(_ update: TransferUpdate) {
        let continuations = state.withLock { state -> [AsyncStream<TransferUpdate>.Continuation] in
            state.latest[update.peer] = update
            state.history.append(update)
            // Keep memory bounded on huge transfers: old progress updates are not replayed.
            if state.history.count > 4096 { state.history.removeFirst(2048) }
            return state.continuations
        }
        for continuation in continuations { continuation.yield(update) }
    }

    func peerEnded(_ summary: PeerTransferSummary) {
        let completion: (summaries: [PeerTransferSummary], continuations: [AsyncStream<TransferUpdate>.Continuation])? = state.withLock { state in
            state.summaries[summary.peer] = summary
            guard state.summaries.count >= state.expectedPeers else { return nil }
            defer { state.continuations = [] }
            return (Self.sorted(state.summaries), state.continuations)
        }
        guard let completion else { return }
        for continuation in completion.continuations { continuation.finish() }
        completed.resolve(completion.summaries)
    }

    private static func sorted(_ summaries: [Peer: PeerTransferSummary]) -> [PeerTransferSummary] {
        summaries.values.sorted { ($0.peer.name, $0.peer.deviceID.description) < ($1.peer.name, $1.peer.deviceID.description) }
    }
}
