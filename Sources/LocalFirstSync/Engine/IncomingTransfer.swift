import Synchronization

/// An offer from a peer: what it wants to send, before any byte of it moves.
public struct IncomingTransfer: Sendable {
    public let from: Peer
    public let offerID: UInt64
    /// The assets of the push's first offer, one per placement: a preview. A
    /// large push streams the rest once accepted; the totals cover all of it.
    public let items: [Asset]
    /// Files in the whole push (every placement), as the sender counted them.
    public let fileCount: UInt64
    /// Bytes of all those files (what would move if we had none of it).
    public let totalByteCount: UInt64
    /// True when the trust policy accepted it without asking.
    public let acceptedAutomatically: Bool
    let decision: OneShotDecision
    let session: ReceiveSessionHandle

    /// False once answered or timed out: a stream may still hold offers that expired unread.
    public var isPending: Bool { decision.answer == nil }

    /// Accepts the offer; the returned session reports progress and, at the end, the files stored.
    @discardableResult
    public func accept() -> ReceiveSessionHandle {
        decision.decide(true)
        return session
    }

    public func decline() { decision.decide(false) }
}

/// The receiving side of an accepted offer, as seen by the application.
public final class ReceiveSessionHandle: Sendable {
    public enum Outcome: Sendable, Hashable {
        case stored([InstalledFile])
        case failed(reason: String)
    }

    private struct State {
        var progress = TransferProgress()
        var outcomes: [ContentID: Outcome] = [:]
        var finished = false
        var continuations: [AsyncStream<TransferProgress>.Continuation] = []
        var waiters: [CheckedContinuation<[ContentID: Outcome], Never>] = []
    }

    private let state = Mutex(State())

    init() {}

    public var progress: TransferProgress { state.withLock { $0.progress } }

    /// Progress updates of this receive session until it ends.
    public func progressUpdates() -> AsyncStream<TransferProgress> {
        let (stream, continuation) = AsyncStream<TransferProgress>.makeStream(bufferingPolicy: .bufferingNewest(64))
        let finished: Bool = state.withLock { state in
            continuation.yield(state.progress)
            if !state.finished { state.continuations.append(continuation) }
            return state.finished
        }
        if finished { continuation.finish() }
        return stream
    }

    /// Waits for the end of the session; per asset, what was stored or why it failed.
    public func files() async -> [ContentID: Outcome] {
        await withCheckedContinuation { continuation in
            let done: [ContentID: Outcome]? = state.withLock { state in
                if state.finished { return state.outcomes }
                state.waiters.append(continuation)
                return nil
            }
            if let done { continuation.resume(returning: done) }
        }
    }

    func update(_ body: (inout TransferProgress) -> Void) {
        let (progress, continuations) = state.withLock { state -> (TransferProgress, [AsyncStream<TransferProgress>.Continuation]) in
            body(&state.progress)
            return (state.progress, state.continuations)
        }
        for continuation in continuations { continuation.yield(progress) }
    }

    func record(_ outcome: Outcome, for content: ContentID) {
        state.withLock { $0.outcomes[content] = outcome }
    }

    func finish() {
        let (outcomes, continuations, waiters) = state.withLock { state in
            guard !state.finished else { return ([ContentID: Outcome](), [AsyncStream<TransferProgress>.Continuation](), [CheckedContinuation<[ContentID: Outcome], Never>]()) }
            state.finished = true
            defer {
                state.continuations = []
                state.waiters = []
            }
            return (state.outcomes, state.continuations, state.waiters)
        }
        for continuation in continuations { continuation.finish() }
        for waiter in waiters { waiter.resume(returning: outcomes) }
    }
}
