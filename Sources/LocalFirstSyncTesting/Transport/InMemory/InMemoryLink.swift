import Synchronization
import LFSyncSystem
import LFSyncTransport

/// Both directions of one in-memory connection, behind one lock.
///
/// Each direction is a FIFO of segments (data, end of stream, reset) owned by the sending
/// side's queue limit: `queuedBytes` counts what the receiver has not read yet, and a sender
/// waits while it is at or above the limit, the same backpressure contract as TCP (minus
/// kernel buffers). Senders and receivers wait on one `Monitor`, in the order they came. A segment becomes readable at once or, with a delay fault, when a task
/// sleeping on the network's clock marks it ready; receivers only ever take the head, so a
/// delayed segment holds back the ones behind it and nothing is reordered.
final class InMemoryLink: Sendable {
    enum Side: Int, Sendable {
        case connector = 0
        case listener = 1

        var other: Side { self == .connector ? .listener : .connector }

        /// The side sending into direction `index`.
        init(sending index: Int) {
            self = index == 0 ? .connector : .listener
        }
    }

    /// Per-endpoint settings, from the transport that created each end.
    struct EndpointSettings: Sendable {
        var sendQueueLimit: Int
        var receiveChunkSize: Int
        var idleTimeout: Duration?
    }

    typealias ReceiveResult = Result<[UInt8]?, TransportError>
    typealias SendResult = Result<Void, TransportError>

    private enum Item: Sendable {
        case data([UInt8])
        case endOfStream
        case reset
    }

    private struct Segment: Sendable {
        var item: Item
        var ready: Bool
        var sequence: UInt64
    }

    /// One direction, indexed by the side that sends into it.
    private struct Direction: Sendable {
        var segments: [Segment] = []
        var headOffset = 0
        var queuedBytes = 0
        var deliveredBytes = 0
        var nextSequence: UInt64 = 0
        /// The receiver closed its end: bytes are discarded on arrival.
        var receiverClosed = false
        /// An end of stream is queued (sender closed, or `closeAfterBytes` reached): later
        /// bytes are dropped.
        var ended = false
        var broken = false
        var cutAfter: Int?
        var closeAfter: Int?
        var delay: Duration = .zero
    }

    private struct State: Sendable {
        var directions = [Direction(), Direction()]
        var open = [true, true]
        /// Receives whose idle timeout fired while they waited.
        var expired = Set<UInt64>()
    }

    let network: InMemoryNetwork
    let listenerAddress: PeerAddress
    private let settings: [EndpointSettings]
    /// Receives wait here for bytes, sends for room: each states what it
    /// needs as a condition on the state, and takes it in the same step.
    private let state: Monitor<State>
    private let waiterIDs = Atomic<UInt64>(0)

    init(network: InMemoryNetwork, listenerAddress: PeerAddress, connector: EndpointSettings,
         listener: EndpointSettings, faults: InMemoryFaults) {
        self.network = network
        self.listenerAddress = listenerAddress
        self.settings = [connector, listener]
        var initial = State()
        Self.apply(faults, to: &initial)
        state = Monitor(initial)
    }

    private static func apply(_ faults: InMemoryFaults, to state: inout State) {
        for (index, direction) in [InMemoryDirection.fromConnector, .fromListener].enumerated()
        where faults.direction.includes(direction) {
            state.directions[index].cutAfter = faults.cutAfterBytes
            state.directions[index].closeAfter = faults.closeAfterBytes
            state.directions[index].delay = faults.delay
        }
    }

    // MARK: Operations of one end

    /// Waits while the direction holds `sendQueueLimit` bytes or more, then queues `bytes`.
    func send(_ bytes: [UInt8], from side: Side) async throws(TransportError) {
        let index = side.rawValue
        let result = await state.wait(orIfCancelled: SendResult.failure(.cancelled)) { [self] state in
            if let error = Self.sendError(state, side) { return .failure(error) }
            if bytes.isEmpty { return .success(()) }
            guard hasRoom(state.directions[index], sender: side) else { return nil }
            deliver(bytes, into: index, state: &state)
            return .success(())
        }
        try result.get()
    }

    func receive(at side: Side) async throws(TransportError) -> [UInt8]? {
        let id = waiterIDs.wrappingAdd(1, ordering: .relaxed).oldValue
        let take: @Sendable (inout State) -> ReceiveResult? = { [self] state in
            if state.expired.remove(id) != nil { return .failure(.timedOut(.idle)) }
            return readable(at: side, from: &state)
        }
        // A receive that need not wait starts no idle timer.
        if let now = state.withLock(take) { return try now.get() }
        let timer = settings[side.rawValue].idleTimeout.map { idleTimeout in
            Task { [network, state] in
                do { try await network.clock.sleep(for: idleTimeout) } catch { return }
                state.withLock { _ = $0.expired.insert(id) }
            }
        }
        defer { timer?.cancel() }
        return try await state.wait(orIfCancelled: ReceiveResult.failure(.cancelled), until: take).get()
    }

    /// Orderly close of one end: its queued bytes are still delivered, then end of stream;
    /// whatever arrives for it from now on is discarded. Its own waiting sends and receives
    /// end with `.closed`.
    func close(_ side: Side) {
        let finished = state.withLock { state -> Bool in
            guard state.open[side.rawValue] else { return false }
            state.open[side.rawValue] = false
            let outgoing = side.rawValue
            if !state.directions[outgoing].broken, !state.directions[outgoing].ended {
                state.directions[outgoing].ended = true
                append(.endOfStream, to: outgoing, state: &state)
            }
            let incoming = side.other.rawValue
            state.directions[incoming].receiverClosed = true
            state.directions[incoming].segments.removeAll()
            state.directions[incoming].headOffset = 0
            state.directions[incoming].queuedBytes = 0
            return !state.open[0] && !state.open[1]
        }
        if finished { network.linkFinished(self) }
    }

    /// Breaks the connection now, as a cable pulled or a peer crashing would.
    func reset() {
        state.withLock { breakLink(state: &$0) }
    }

    /// Replaces the byte faults of this connection (`connect` is ignored); byte counts keep
    /// counting from the start of the connection.
    func inject(_ faults: InMemoryFaults) {
        state.withLock { Self.apply(faults, to: &$0) }
    }

    // MARK: Internals

    private static func sendError(_ state: State, _ side: Side) -> TransportError? {
        if !state.open[side.rawValue] { return .closed }
        if state.directions[side.rawValue].broken { return .connectionReset }
        return nil
    }

    private func hasRoom(_ direction: Direction, sender side: Side) -> Bool {
        direction.queuedBytes < settings[side.rawValue].sendQueueLimit || direction.receiverClosed || direction.ended
    }

    /// What a receive at `side` gets now, if anything: the head segment's next
    /// bytes (at most `receiveChunkSize`), or the end of the stream or the
    /// reset, which stay at the head so every later receive gets them too.
    private func readable(at side: Side, from state: inout State) -> ReceiveResult? {
        guard state.open[side.rawValue] else { return .failure(.closed) }
        let index = side.other.rawValue
        guard let head = state.directions[index].segments.first, head.ready else { return nil }
        switch head.item {
        case .data(let bytes):
            let chunkLimit = max(1, settings[side.rawValue].receiveChunkSize)
            let offset = state.directions[index].headOffset
            let count = min(chunkLimit, bytes.count - offset)
            let chunk = offset == 0 && count == bytes.count ? bytes : Array(bytes[offset..<offset + count])
            if offset + count == bytes.count {
                state.directions[index].segments.removeFirst()
                state.directions[index].headOffset = 0
            } else {
                state.directions[index].headOffset = offset + count
            }
            state.directions[index].queuedBytes -= count
            return .success(chunk)
        case .endOfStream:
            return .success(nil)
        case .reset:
            return .failure(.connectionReset)
        }
    }

    /// Queues `item`; with a delay fault, a task on the network's clock makes it readable later.
    private func append(_ item: Item, to index: Int, state: inout State) {
        let sequence = state.directions[index].nextSequence
        state.directions[index].nextSequence += 1
        let delay = state.directions[index].delay
        let ready = delay <= .zero
        state.directions[index].segments.append(Segment(item: item, ready: ready, sequence: sequence))
        if case .data(let bytes) = item { state.directions[index].queuedBytes += bytes.count }
        if !ready {
            Task { [network] in
                try? await network.clock.sleep(for: delay)
                self.markReady(sequence, in: index)
            }
        }
    }

    /// Puts `bytes` on the wire of direction `index`, applying cut and close faults at their
    /// exact byte count.
    private func deliver(_ bytes: [UInt8], into index: Int, state: inout State) {
        let direction = state.directions[index]
        guard !direction.receiverClosed, !direction.ended, !direction.broken else { return }
        let delivered = direction.deliveredBytes
        if let limit = [direction.cutAfter, direction.closeAfter].compactMap({ $0 }).min(),
           delivered + bytes.count >= limit {
            let room = max(0, limit - delivered)
            if room > 0 {
                append(.data(Array(bytes.prefix(room))), to: index, state: &state)
                state.directions[index].deliveredBytes += room
            }
            if limit == direction.cutAfter {
                breakLink(state: &state)
            } else {
                state.directions[index].ended = true
                append(.endOfStream, to: index, state: &state)
            }
            return
        }
        append(.data(bytes), to: index, state: &state)
        state.directions[index].deliveredBytes += bytes.count
    }

    private func breakLink(state: inout State) {
        for index in 0..<2 where !state.directions[index].broken {
            state.directions[index].broken = true
            if !state.directions[index].receiverClosed, !state.directions[index].ended {
                append(.reset, to: index, state: &state)
            }
        }
    }

    private func markReady(_ sequence: UInt64, in index: Int) {
        state.withLock { state in
            guard let position = state.directions[index].segments.firstIndex(where: { $0.sequence == sequence }) else { return }
            state.directions[index].segments[position].ready = true
        }
    }
}
