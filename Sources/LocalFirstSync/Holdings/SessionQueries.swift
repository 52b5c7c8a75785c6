import LFSyncSystem
import LFSyncWire

/// The question-and-answer messages of one connection — HoldingCheck → HoldingReport,
/// ChunkRequest → ChunkReply (PROTOCOL.md, "Holding checks"), PathStateRequest →
/// PathStateReport and SyncRequest → SyncReply ("Path versions"): our questions waiting for
/// their answers, and the peer's questions, answered one at a time by `run()`, which the
/// session runs beside its read loop so that re-reading a library for a proof never
/// stops the connection.
///
/// SyncRequests have a lane of their own (also one at a time): applying one asks the peer
/// questions of its own, and a peer applying *our* SyncRequest at the same moment asks us
/// some too. Behind a sync in one queue, those questions waited for the sync that waited
/// for their answers, on both devices at once, until both timed out (five minutes).
actor SessionQueries {
    /// Questions from the peer queued at once; one more is a protocol violation (each can
    /// cost reading every byte of a thousand assets).
    static let maxQueuedQuestions = 4

    private let peer: Peer
    private let context: SessionContext
    private weak var session: PeerSession?
    /// Ours, by request ID: nil once the connection ended first.
    private var waiting: [UInt64: Eventual<WireMessage?>] = [:]
    private let questions = AsyncStream<WireMessage>.makeStream()
    private let syncRequests = AsyncStream<WireMessage.SyncRequest>.makeStream()
    private var queued = 0
    private var closed = false

    init(peer: Peer, context: SessionContext) {
        self.peer = peer
        self.context = context
    }

    func attach(to session: PeerSession) {
        self.session = session
    }

    // MARK: - Asking

    /// Sends `question` and waits for its answer, at most `timeout` on the session's clock.
    /// - Throws: `.connectionFailed` if the connection ends first, `.timedOut` after the
    ///   deadline (a late answer is then dropped), `.cancelled` if the caller is.
    func ask(_ question: WireMessage, requestID: UInt64, timeout: Duration) async throws(SyncError) -> WireMessage {
        guard !closed, let session else { throw .connectionFailed("\(peer) is not connected") }
        let answer = Eventual<WireMessage?>()
        waiting[requestID] = answer
        defer { waiting[requestID] = nil }
        let timer = Deadline.after(timeout, on: context.clock) { answer.resolve(nil) }
        defer { timer.cancel() }
        try await session.send([question])
        guard let result = await answer.waitUnlessCancelled() else { throw .cancelled }
        guard let result else {
            if closed { throw .connectionFailed("\(peer) disconnected before answering") }
            throw .timedOut("\(peer) did not answer within \(timeout)")
        }
        return result
    }

    /// An answer from the peer; one nobody waits for (late, after a timeout) is dropped.
    func answerArrived(_ message: WireMessage, requestID: UInt64) {
        waiting[requestID]?.resolve(message)
    }

    // MARK: - Answering

    /// A question from the peer, queued for `run()`.
    func questionArrived(_ message: WireMessage) throws(SyncError) {
        guard !closed else { return }
        guard queued < Self.maxQueuedQuestions else {
            throw .protocolViolation("more than \(Self.maxQueuedQuestions) questions sent without waiting for their answers")
        }
        queued += 1
        if case let .syncRequest(request) = message {
            syncRequests.continuation.yield(request)
        } else {
            questions.continuation.yield(message)
        }
    }

    /// Answers the peer's questions until the session closes: SyncRequests in order, and
    /// beside them every other question in order.
    func run() async {
        await withDiscardingTaskGroup { lanes in
            lanes.addTask { await self.answerSyncRequests() }
            await answerQuestions()
        }
    }

    private func answerSyncRequests() async {
        for await request in syncRequests.stream {
            let answer = WireMessage.syncReply(await context.sync(request, from: peer))
            queued -= 1
            if !closed { try? await session?.send([answer]) }
        }
    }

    private func answerQuestions() async {
        for await question in questions.stream {
            let answer: WireMessage?
            switch question {
            case let .holdingCheck(check):
                switch await context.holdingAnswers(for: check, from: peer) {
                case let .answers(answers): answer = .holdingReport(.init(requestID: check.requestID, answers: answers))
                case .refused: answer = .holdingReport(.init(requestID: check.requestID, answers: nil))
                case let .overLimit(reason):
                    await session?.violated(.limitExceeded, reason)
                    answer = nil
                }
            case let .chunkRequest(request):
                answer = .chunkReply(.init(requestID: request.requestID, outcome: await context.chunk(for: request, from: peer)))
            case let .pathStateRequest(request):
                answer = .pathStateReport(await context.pathStates(for: request, from: peer))
            default:
                answer = nil
            }
            queued -= 1
            if let answer, !closed { try? await session?.send([answer]) }
        }
    }

    /// The connection ended: our questions fail, the peer's are dropped.
    func close() {
        closed = true
        for answer in waiting.values { answer.resolve(nil) }
        questions.continuation.finish()
        syncRequests.continuation.finish()
    }
}
