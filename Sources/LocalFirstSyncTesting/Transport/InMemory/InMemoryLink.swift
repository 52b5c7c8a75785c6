import Synchronization
import LFSyncTransport

/// Both directions of one in-memory connection, behind one lock.
///
/// Each direction is a FIFO of segments (data, end of stream, reset) owned by the sending
/// side's queue limit: `queuedBytes` counts what the receiver has not read yet, and a sender
/// waits while it is at or above the limit, the same backpressure contract as TCP (minus
/// kernel buffers). A segment becomes readable at once or, with a delay fault, when a task
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

    private enum Item {
        case data([UInt8])
        case endOfStream
        case reset
    }

    private struct Segment {
        var item: Item
        var ready: Bool
        var sequence: UInt64
    }

    private struct Receiver {
        var id: UInt64
        var continuation: CheckedContinuation<ReceiveResult, Never>
        var timeout: Task<Void, Never>?
    }

    private struct Sender {
        var id: UInt64
        var bytes: [UInt8]
        var continuation: CheckedContinuation<SendResult, Never>
    }

    /// One direction, indexed by the side that sends into it.
    private struct Direction {
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
        var receivers: [Receiver] = []
        var senders: [Sender] = []
    }

    /// Continuations to resume and tasks to start once the lock is released.
    private struct Wakeups: Sendable {
        var receives: [(CheckedContinuation<ReceiveResult, Never>, ReceiveResult, Task<Void, Never>?)] = []
        var sends: [(CheckedContinuation<SendResult, Never>, SendResult)] = []
        var delayed: [(direction: Int, sequence: UInt64, delay: Duration)] = []
        var finished = false
    }

    private struct State {
        var directions = [Direction(), Direction()]
        var open = [true, true]
    }

    let network: InMemoryNetwork
    let listenerAddress: PeerAddress
    private let settings: [EndpointSettings]
    private let state = Mutex(State())
    private let waiterIDs = Atomic<UInt64>(0)

    init(network: InMemoryNetwork, listenerAddress: PeerAddress, connector: EndpointSettings,
         listener: EndpointSettings, faults: InMemoryFaults) {
        self.network = network
        self.listenerAddress = listenerAddress
        self.settings = [connector, listener]
        state.withLock { Self.apply(faults, to: &$0) }
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

    func send(_ bytes: [UInt8], from side: Side) async throws(TransportError) {
        let index = side.rawValue
        let immediate = withState { state, wakeups -> SendResult? in
            if let error = Self.sendError(state, side) { return .failure(error) }
            if bytes.isEmpty { return .success(()) }
            guard hasRoom(state.directions[index], sender: side) else { return nil }
            deliver(bytes, into: index, state: &state, wakeups: &wakeups)
            serve(index, state: &state, wakeups: &wakeups)
            return .success(())
        }
        if let immediate { return try immediate.get() }

        let id = waiterIDs.wrappingAdd(1, ordering: .relaxed).oldValue
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<SendResult, Never>) in
                let early = withState { state, wakeups -> SendResult? in
                    if let error = Self.sendError(state, side) { return .failure(error) }
                    if Task.isCancelled { return .failure(.cancelled) }
                    state.directions[index].senders.append(Sender(id: id, bytes: bytes, continuation: continuation))
                    serve(index, state: &state, wakeups: &wakeups)
                    return nil
                }
                if let early { continuation.resume(returning: early) }
            }
        } onCancel: {
            withState { state, wakeups in
                guard let position = state.directions[index].senders.firstIndex(where: { $0.id == id }) else { return }
                let sender = state.directions[index].senders.remove(at: position)
                wakeups.sends.append((sender.continuation, .failure(.cancelled)))
            }
        }
        try result.get()
    }

    func receive(at side: Side) async throws(TransportError) -> [UInt8]? {
        let index = side.other.rawValue
        let id = waiterIDs.wrappingAdd(1, ordering: .relaxed).oldValue
        let idleTimeout = settings[side.rawValue].idleTimeout
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<ReceiveResult, Never>) in
                let early = withState { state, wakeups -> ReceiveResult? in
                    if !state.open[side.rawValue] { return .failure(.closed) }
                    if Task.isCancelled { return .failure(.cancelled) }
                    state.directions[index].receivers.append(Receiver(id: id, continuation: continuation, timeout: nil))
                    serve(index, state: &state, wakeups: &wakeups)
                    if let idleTimeout, let position = state.directions[index].receivers.firstIndex(where: { $0.id == id }) {
                        state.directions[index].receivers[position].timeout = Task { [network] in
                            do { try await network.clock.sleep(for: idleTimeout) } catch { return }
                            self.expireReceiver(id, in: index)
                        }
                    }
                    return nil
                }
                if let early { continuation.resume(returning: early) }
            }
        } onCancel: {
            removeReceiver(id, in: index, with: .failure(.cancelled))
        }
        return try result.get()
    }

    /// Orderly close of one end: its queued bytes are still delivered, then end of stream;
    /// whatever arrives for it from now on is discarded.
    func close(_ side: Side) {
        let finished = withState { state, wakeups -> Bool in
            guard state.open[side.rawValue] else { return false }
            state.open[side.rawValue] = false
            let outgoing = side.rawValue
            for sender in state.directions[outgoing].senders {
                wakeups.sends.append((sender.continuation, .failure(.closed)))
            }
            state.directions[outgoing].senders.removeAll()
            if !state.directions[outgoing].broken, !state.directions[outgoing].ended {
                state.directions[outgoing].ended = true
                append(.endOfStream, to: outgoing, state: &state, wakeups: &wakeups)
            }
            serve(outgoing, state: &state, wakeups: &wakeups)

            let incoming = side.other.rawValue
            for receiver in state.directions[incoming].receivers {
                wakeups.receives.append((receiver.continuation, .failure(.closed), receiver.timeout))
            }
            state.directions[incoming].receivers.removeAll()
            state.directions[incoming].receiverClosed = true
            state.directions[incoming].segments.removeAll()
            state.directions[incoming].headOffset = 0
            state.directions[incoming].queuedBytes = 0
            serve(incoming, state: &state, wakeups: &wakeups)
            return !state.open[0] && !state.open[1]
        }
        if finished { network.linkFinished(self) }
    }

    /// Breaks the connection now, as a cable pulled or a peer crashing would.
    func reset() {
        withState { state, wakeups in
            breakLink(state: &state, wakeups: &wakeups)
        }
    }

    /// Replaces the byte faults of this connection (`connect` is ignored); byte counts keep
    /// counting from the start of the connection.
    func inject(_ faults: InMemoryFaults) {
        withState { state, _ in Self.apply(faults, to: &state) }
    }

    // MARK: Internals

    /// Runs `body` under the lock, then resumes and starts what it collected.
    @discardableResult
    private func withState<R: Sendable>(_ body: (inout State, inout Wakeups) -> R) -> R {
        let (result, wakeups) = state.withLock { state -> (R, Wakeups) in
            var wakeups = Wakeups()
            let result = body(&state, &wakeups)
            return (result, wakeups)
        }
        for (direction, sequence, delay) in wakeups.delayed {
            Task { [network] in
                try? await network.clock.sleep(for: delay)
                self.markReady(sequence, in: direction)
            }
        }
        for (continuation, result, timeout) in wakeups.receives {
            timeout?.cancel()
            continuation.resume(returning: result)
        }
        for (continuation, result) in wakeups.sends { continuation.resume(returning: result) }
        return result
    }

    private static func sendError(_ state: State, _ side: Side) -> TransportError? {
        if !state.open[side.rawValue] { return .closed }
        if state.directions[side.rawValue].broken { return .connectionReset }
        return nil
    }

    private func hasRoom(_ direction: Direction, sender side: Side) -> Bool {
        direction.senders.isEmpty
            && (direction.queuedBytes < settings[side.rawValue].sendQueueLimit || direction.receiverClosed || direction.ended)
    }

    private func append(_ item: Item, to index: Int, state: inout State, wakeups: inout Wakeups) {
        let sequence = state.directions[index].nextSequence
        state.directions[index].nextSequence += 1
        let delay = state.directions[index].delay
        let ready = delay <= .zero
        state.directions[index].segments.append(Segment(item: item, ready: ready, sequence: sequence))
        if case .data(let bytes) = item { state.directions[index].queuedBytes += bytes.count }
        if !ready { wakeups.delayed.append((index, sequence, delay)) }
    }

    /// Puts `bytes` on the wire of direction `index`, applying cut and close faults at their
    /// exact byte count.
    private func deliver(_ bytes: [UInt8], into index: Int, state: inout State, wakeups: inout Wakeups) {
        let direction = state.directions[index]
        guard !direction.receiverClosed, !direction.ended, !direction.broken else { return }
        let delivered = direction.deliveredBytes
        if let limit = [direction.cutAfter, direction.closeAfter].compactMap({ $0 }).min(),
           delivered + bytes.count >= limit {
            let room = max(0, limit - delivered)
            if room > 0 {
                append(.data(Array(bytes.prefix(room))), to: index, state: &state, wakeups: &wakeups)
                state.directions[index].deliveredBytes += room
            }
            if limit == direction.cutAfter {
                breakLink(state: &state, wakeups: &wakeups)
            } else {
                state.directions[index].ended = true
                append(.endOfStream, to: index, state: &state, wakeups: &wakeups)
            }
            return
        }
        append(.data(bytes), to: index, state: &state, wakeups: &wakeups)
        state.directions[index].deliveredBytes += bytes.count
    }

    private func breakLink(state: inout State, wakeups: inout Wakeups) {
        for index in 0..<2 where !state.directions[index].broken {
            state.directions[index].broken = true
            for sender in state.directions[index].senders {
                wakeups.sends.append((sender.continuation, .failure(.connectionReset)))
            }
            state.directions[index].senders.removeAll()
            if !state.directions[index].receiverClosed, !state.directions[index].ended {
                append(.reset, to: index, state: &state, wakeups: &wakeups)
            }
            serve(index, state: &state, wakeups: &wakeups)
        }
    }

    /// Hands ready segments to waiting receivers and admits waiting senders while there is
    /// room, until neither can progress.
    private func serve(_ index: Int, state: inout State, wakeups: inout Wakeups) {
        let receiverSide = Side(sending: index).other
        let chunkLimit = max(1, settings[receiverSide.rawValue].receiveChunkSize)
        while true {
            while let receiver = state.directions[index].receivers.first,
                  let head = state.directions[index].segments.first, head.ready {
                switch head.item {
                case .data(let bytes):
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
                    state.directions[index].receivers.removeFirst()
                    wakeups.receives.append((receiver.continuation, .success(chunk), receiver.timeout))
                case .endOfStream, .reset:
                    // Sticky: every receive from now on gets the same answer.
                    let result: ReceiveResult = if case .reset = head.item { .failure(.connectionReset) } else { .success(nil) }
                    for waiting in state.directions[index].receivers {
                        wakeups.receives.append((waiting.continuation, result, waiting.timeout))
                    }
                    state.directions[index].receivers.removeAll()
                }
            }
            var admitted = false
            let senderSide = Side(sending: index)
            while let sender = state.directions[index].senders.first, !state.directions[index].broken,
                  state.directions[index].queuedBytes < settings[senderSide.rawValue].sendQueueLimit
                    || state.directions[index].receiverClosed || state.directions[index].ended {
                state.directions[index].senders.removeFirst()
                deliver(sender.bytes, into: index, state: &state, wakeups: &wakeups)
                wakeups.sends.append((sender.continuation, .success(())))
                admitted = true
            }
            if !admitted { return }
        }
    }

    private func markReady(_ sequence: UInt64, in index: Int) {
        withState { state, wakeups in
            guard let position = state.directions[index].segments.firstIndex(where: { $0.sequence == sequence }) else { return }
            state.directions[index].segments[position].ready = true
            serve(index, state: &state, wakeups: &wakeups)
        }
    }

    private func expireReceiver(_ id: UInt64, in index: Int) {
        removeReceiver(id, in: index, with: .failure(.timedOut(.idle)))
    }

    private func removeReceiver(_ id: UInt64, in index: Int, with result: ReceiveResult) {
        withState { state, wakeups in
            guard let position = state.directions[index].receivers.firstIndex(where: { $0.id == id }) else { return }
            let receiver = state.directions[index].receivers.remove(at: position)
            wakeups.receives.append((receiver.continuation, result, receiver.timeout))
        }
    }
}
