import LFSyncSystem
import LFSyncWire

/// One connected peer: its secure channel and the single loop that reads
/// everything the peer sends, in order, and hands each message to the side
/// it concerns:
///
/// - `SessionSender`, the outgoing side: replies and receipts for the offers
///   we made (`PeerSendJob` makes them through it);
/// - `SessionReceiver`, the incoming side: the offers the peer makes us, and
///   their chunks and cancels.
///
/// The session itself keeps the connection: keep-alive pings, pulls, the
/// peer's errors, and closing, which ends both sides. Because one loop reads
/// and each side is an actor, interleavings across several peers cannot
/// corrupt per-peer state; the owning `LocalSync` only routes.
actor PeerSession {
    nonisolated let peer: Peer
    let channel: SecureChannel
    /// Our offers to this peer.
    nonisolated let sender: SessionSender
    /// This peer's offers to us.
    nonisolated let receiver: SessionReceiver
    /// Holding checks and chunk requests, both ways.
    nonisolated let queries: SessionQueries
    private let context: SessionContext
    /// A Ping went out after a quiet spell and nothing has come back since.
    private var pingUnanswered = false
    private var closedReason: String?
    /// Resolved with the reason once the session has closed, for whoever waits for that.
    private let ended = Eventual<String>()
    private var onClose: (@Sendable (PeerSession) async -> Void)?
    /// Decrypts the next messages while the sides handle the current one.
    private let readAhead: ChannelReadAhead

    init(peer: Peer, channel: SecureChannel, context: SessionContext) {
        self.peer = peer
        self.channel = channel
        self.context = context
        sender = SessionSender(clock: context.clock)
        receiver = SessionReceiver(peer: peer, channel: channel, context: context)
        queries = SessionQueries(peer: peer, context: context)
        readAhead = ChannelReadAhead(channel: channel)
    }

    /// Readies both sides; `run()` then reads the peer's messages until the session closes.
    func start(onClose: @escaping @Sendable (PeerSession) async -> Void) async {
        self.onClose = onClose
        await sender.attach(to: self)
        await receiver.attach(to: self)
        await queries.attach(to: self)
    }

    var isOpen: Bool { closedReason == nil }
    /// Why the connection ended, once it has.
    var closeReason: String? { closedReason }

    /// Sends on the channel; a failure to send (other than our own message
    /// being unencodable) ends the session.
    func send(_ messages: [WireMessage]) async throws(SyncError) {
        if let closedReason { throw .connectionFailed(closedReason) }
        do { try await channel.send(messages) } catch {
            if case .unencodable = error { throw .localFailure(error.description) }
            await close(reason: error.description)
            throw .connectionFailed(error.description)
        }
    }

    private func sendOrClose(_ messages: [WireMessage]) async {
        do { try await send(messages) } catch {}
    }

    // MARK: - The loop

    /// The loop: one message at a time, to the side it concerns, until the session closes;
    /// beside it, the incoming side's events (`SessionReceiver.run()`). The engine runs it as
    /// a child of its task group (`EngineTasks`); `close()` ends both (the channel it reads
    /// from is closed, the receiver's events end).
    func run() async {
        await withDiscardingTaskGroup { group in
            // The incoming side's own events (its threads reporting back, answers, flushes).
            group.addTask { await self.receiver.run() }
            // The channel's next messages, decrypted while the current one is handled.
            group.addTask { [readAhead] in await readAhead.run() }
            await withDiscardingTaskGroup { questions in
                // The peer's questions, answered beside the read loop. When the connection
                // ends, an answer under way (a proof reading a thousand assets) stops at its next
                // slice instead of holding the session, and `stop()`, until it is done.
                questions.addTask { await self.queries.run() }
                await readLoop()
                questions.cancelAll()
            }
        }
    }

    private func readLoop() async {
        while closedReason == nil {
            let received: ChannelReadAhead.Incoming?
            do { received = try await readAhead.next().get() } catch {
                if case .transport(.timedOut(.idle)) = error {
                    // Quiet is fine (a person may be deciding) and a ping proves the peer is still
                    // there; a peer that did not answer the last one (nor sent anything else) is
                    // gone, or stuck: waiting on it for ever would hold a cron push and its lock.
                    if pingUnanswered {
                        await close(reason: "\(peer) stopped answering: nothing received for \((WireProtocol.idleInterval * 2).components.seconds) s, not even a Pong")
                        return
                    }
                    pingUnanswered = true
                    await sendOrClose([.ping(.init(nonce: UInt64.random(in: 0...UInt64.max)))])
                    continue
                }
                // A frame or message that breaks the protocol is named to the peer before we hang up
                // (the stream can't be trusted past it, but our sending half still works). Anything
                // below that (decryption, the socket) leaves nothing to say.
                if let reply = error.errorReply {
                    context.log("dropped \(peer): \(error)")
                    try? await channel.send(.error(reply))
                }
                await close(reason: error.description)
                return
            }
            guard let received else {
                await close(reason: "\(peer) closed the connection")
                return
            }
            pingUnanswered = false
            // Closed while we waited (by the owner, or a replacement connection): what is still
            // buffered belongs to a session that no longer exists.
            guard closedReason == nil else { return }
            do throws(SyncError) {
                try await handle(received.message)
            } catch {
                // A peer that breaks the protocol is told why, then dropped (PROTOCOL.md, "Error"
                // says which code for what).
                context.log("dropped \(peer): \(error)")
                let code: WireMessage.ErrorMessage.Code = switch error {
                case .malformedMessage: .malformedMessage
                case .declined: .notAccepted
                default: .unexpectedMessage
                }
                try? await channel.send(.error(.init(code: code, message: WireText.fitted(error.description, maxBytes: 1000))))
                await close(reason: error.description)
                return
            }
            // Backpressure: the next message waits while the disk catches up.
            await receiver.roomForMore()
        }
    }

    private func handle(_ message: WireMessage) async throws(SyncError) {
        switch message {
        case let .offer(offer):
            try await receiver.received(offer)
        case let .chunk(chunk):
            try await receiver.received(chunk)
        case let .cancel(cancel):
            await receiver.cancelled(cancel)
        case let .offerReply(reply):
            try await sender.replyArrived(reply)
        case let .receipt(receipt):
            try await sender.receiptArrived(receipt)
        case let .ping(ping):
            try await send([.pong(.init(nonce: ping.nonce))])
        case .pong:
            break
        case let .error(error):
            throw .peerFailed(error.message)
        case let .pull(pull):
            try await context.pullRequested(by: peer, excluding: pull.excludes)
        case let .fetch(fetch):
            try await requireHoldings(message)
            try await context.fetchRequested(by: peer, contents: fetch.contents)
        case .holdingCheck, .chunkRequest:
            try await requireHoldings(message)
            try await queries.questionArrived(message)
        case let .holdingReport(report):
            await queries.answerArrived(message, requestID: report.requestID)
        case let .chunkReply(reply):
            await queries.answerArrived(message, requestID: reply.requestID)
        case .pathStateRequest, .syncRequest:
            try await requirePathVersions(message)
            try await queries.questionArrived(message)
        case let .pathStateReport(report):
            await queries.answerArrived(message, requestID: report.requestID)
        case let .syncReply(reply):
            await queries.answerArrived(message, requestID: reply.requestID)
        case .hello, .connectionDecision:
            throw .protocolViolation("\(message.type) after the connection was set up")
        }
    }

    /// Holding checks, chunk requests and Fetches come only from a peer whose Hello
    /// announced capability bit 2 (PROTOCOL.md, Session flow 10).
    private func requireHoldings(_ message: WireMessage) async throws(SyncError) {
        guard await channel.peerCapabilities.contains(.holdings) else {
            throw .protocolViolation("\(message.type) from a peer that did not announce holding checks (capability bit 2)")
        }
    }

    /// Path state requests and sync requests come only from a peer whose Hello announced
    /// capability bit 3 (PROTOCOL.md, "Path versions").
    private func requirePathVersions(_ message: WireMessage) async throws(SyncError) {
        guard await channel.peerCapabilities.contains(.pathVersions) else {
            throw .protocolViolation("\(message.type) from a peer that did not announce path versions (capability bit 3)")
        }
    }

    /// The peer broke a rule that only an answering task could see (a holding check over
    /// its limit): it is told why, with the Error code PROTOCOL.md gives, and dropped.
    func violated(_ code: WireMessage.ErrorMessage.Code, _ reason: String) async {
        guard closedReason == nil else { return }
        context.log("dropped \(peer): \(reason)")
        try? await channel.send(.error(.init(code: code, message: WireText.fitted(reason, maxBytes: 1000))))
        await close(reason: reason)
    }

    // MARK: - Closing

    /// Ends the connection: the incoming side lets what is queued land and
    /// sends its last receipts, the outgoing side fails what still waits for
    /// a reply, then the channel closes.
    func close(reason: String) async {
        guard closedReason == nil else { return }
        closedReason = reason
        await receiver.close(reason: reason)
        await sender.close(reason: reason)
        await queries.close()
        readAhead.stop()
        await channel.close()
        if let onClose {
            self.onClose = nil
            await onClose(self)
        }
        ended.resolve(reason)
    }

    /// Waits until the session has closed, and says why; nil when the waiting task is
    /// cancelled first.
    nonisolated func waitUntilClosed() async -> String? {
        await ended.waitUnlessCancelled()
    }
}
