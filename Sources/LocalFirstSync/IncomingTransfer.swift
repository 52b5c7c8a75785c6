import Synchronization
import LFSyncContent
import LFSyncStore
import LFSyncLanding
import LFSyncSystem

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

    /// Accepts the offer; the returned session reports progress and, at the end, the files
    /// stored. Accepting one that was accepted automatically just hands over its session.
    /// - Throws: `.expired` when its consent time ran out first (the peer was told no),
    ///   `.declined` when it was declined.
    @discardableResult
    public func accept() async throws(IncomingTransferError) -> ReceiveSessionHandle {
        guard decision.decide(true) || decision.answer == true else {
            throw decision.hasExpired ? .expired : .declined
        }
        return session
    }

    public func decline() { decision.decide(false) }
}

/// Why an incoming transfer cannot be accepted or followed any more.
public enum IncomingTransferError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Nobody answered within the consent timeout: it counted as declined, and the peer was told.
    case expired
    /// It was declined.
    case declined

    public var description: String {
        switch self {
        case .expired: "the offer expired unanswered (the consent timeout ran out) and was declined"
        case .declined: "the offer was declined"
        }
    }
}

/// The receiving side of an accepted offer, as seen by the application.
public final class ReceiveSessionHandle: Sendable {
    /// What became of one asset.
    public enum Outcome: Sendable, Hashable {
        /// Received, verified and installed (the files, at their final paths).
        case stored([InstalledFile])
        /// Every file was already in the library with these bytes: nothing was sent.
        case alreadyPresent([InstalledFile])
        case failed(reason: String)

        /// Whether the asset is in the library now (stored, or already there).
        public var isInLibrary: Bool {
            switch self {
            case .stored, .alreadyPresent: true
            case .failed: false
            }
        }
    }

    private struct State {
        var progress = TransferProgress()
        var outcomes: [ContentID: Outcome] = [:]
        var finished = false
        var continuations: [AsyncStream<TransferProgress>.Continuation] = []
    }

    private let state = LockedState(State())
    /// Every asset's outcome, once the session has ended.
    private let ended = Eventual<[ContentID: Outcome]>()
    /// The consent this session depends on (nil: accepted from the start).
    private let decision: OneShotDecision?

    init(decision: OneShotDecision? = nil) {
        self.decision = decision
    }

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
    /// - Throws: `.expired` or `.declined` when the transfer was never accepted.
    public func files() async throws(IncomingTransferError) -> [ContentID: Outcome] {
        let outcomes = await ended.wait()
        if let decision, decision.answer == false { throw decision.hasExpired ? .expired : .declined }
        return outcomes
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

    func end() {
        let ending: (outcomes: [ContentID: Outcome], continuations: [AsyncStream<TransferProgress>.Continuation])? = state.withLock { state in
            guard !state.finished else { return nil }
            state.finished = true
            defer { state.continuations = [] }
            return (state.outcomes, state.continuations)
        }
        guard let ending else { return }
        for continuation in ending.continuations { continuation.finish() }
        ended.resolve(ending.outcomes)
    }
}
