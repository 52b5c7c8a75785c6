#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import LFSyncTransport

/// The state machine of one established TCP connection, shared by its handle
/// (`TCPConnection`) and the reactor.
///
/// The two directions are independent, each behind its own lock, so a large write on one
/// thread never holds up a read on another. Every system call on the descriptor happens
/// under the lock of its direction, and the descriptor is closed only while holding both
/// (writer, then reader — the one lock order used): no call can ever reach a closed or
/// reused descriptor number.
///
/// Callers try the system call first on their own task; only "would block" parks a
/// continuation and arms the descriptor. The reactor then performs the call and resumes the
/// continuation — exactly once, since a waiter is always removed from its list (under the
/// lock) by whoever resumes it.
final class TCPConnectionCore: ReactorHandler, Sendable {
    package typealias ReceiveResult = Result<[UInt8]?, TransportError>
    package typealias SendResult = Result<Void, TransportError>

    private struct ReceiveWaiter {
        var id: UInt64
        var continuation: CheckedContinuation<ReceiveResult, Never>
        var deadline: MonotonicInstant?
    }

    private struct SendWaiter {
        var id: UInt64
        var bytes: [UInt8]
        var continuation: CheckedContinuation<SendResult, Never>
    }

    private struct ReadSide {
        var endOfStream = false
        var failure: TransportError?
        var closedLocally = false
        var descriptorOpen = true
        var waiters: [ReceiveWaiter] = []
        /// After `close()`: reading and discarding until the peer's end of stream, in the
        /// background, before the descriptor is released (see `close`).
        var lingering = false
        var lingerDeadline: MonotonicInstant?

        /// What every receive returns from now on, if the stream is over.
        var terminal: ReceiveResult? {
            if closedLocally { return .failure(.closed) }
            if let failure { return .failure(failure) }
            if endOfStream { return .success(nil) }
            return nil
        }
    }

    private struct WriteSide {
        var queue = OutboundQueue()
        var failure: TransportError?
        var closedLocally = false
        var descriptorOpen = true
        var waiters: [SendWaiter] = []
        /// `close()` waiting for the queue to drain: true when flushed, false on timeout.
        var flush: CheckedContinuation<Bool, Never>?
        var flushDeadline: MonotonicInstant?

        var sendError: TransportError? {
            closedLocally ? .closed : failure
        }
    }

    private enum CloseState {
        case open
        case closing([CheckedContinuation<Void, Never>])
        case closed
    }

    package let registration: ReactorRegistration
    private let receiveChunkSize: Int
    private let sendQueueLimit: Int
    private let idleTimeout: Duration?
    private let closeTimeout: Duration
    private let reader = Mutex(ReadSide())
    private let writer = Mutex(WriteSide())
    private let closeState = Mutex(CloseState.open)
    private let waiterIDs = Atomic<UInt64>(0)

    package var fd: Int32 { registration.fd }

    package init(registration: ReactorRegistration, configuration: TCPTransport.Configuration) {
        self.registration = registration
        self.receiveChunkSize = max(1, configuration.receiveChunkSize)
        self.sendQueueLimit = max(1, configuration.sendQueueLimitBytes)
        self.idleTimeout = configuration.idleTimeout
        self.closeTimeout = configuration.closeTimeout
    }

    private func makeWaiterID() -> UInt64 {
        waiterIDs.wrappingAdd(1, ordering: .relaxed).oldValue
    }

    // MARK: Receiving

    package func receive() async throws(TransportError) -> [UInt8]? {
        let immediate = reader.withLock { side -> ReceiveResult? in
            if let terminal = side.terminal { return terminal }
            guard side.waiters.isEmpty, side.descriptorOpen else { return nil }
            return Self.completeRead(SocketIO.read(fd, maximum: receiveChunkSize), in: &side)
        }
        if let immediate { return try immediate.get() }
        return try await waitForBytes().get()
    }

    /// Applies a read result to the read side; nil when it would block.
    private static func completeRead(_ result: SocketIO.ReadResult, in side: inout ReadSide) -> ReceiveResult? {
        switch result {
        case .bytes(let bytes): return .success(bytes)
        case .wouldBlock: return nil
        case .endOfStream:
            side.endOfStream = true
            return .success(nil)
        case .failed(let error):
            side.failure = error
            return .failure(error)
        }
    }

    private func waitForBytes() async -> ReceiveResult {
        let id = makeWaiterID()
        let deadline = idleTimeout.map { MonotonicInstant.now().advanced(by: $0) }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<ReceiveResult, Never>) in
                let early = reader.withLock { side -> ReceiveResult? in
                    if let terminal = side.terminal { return terminal }
                    if Task.isCancelled { return .failure(.cancelled) }
                    side.waiters.append(ReceiveWaiter(id: id, continuation: continuation, deadline: deadline))
                    return nil
                }
                if let early {
                    continuation.resume(returning: early)
                    return
                }
                registration.want(.read)
                if let deadline { registration.schedule(at: deadline) }
            }
        } onCancel: {
            let waiter = reader.withLock { side -> ReceiveWaiter? in
                guard let index = side.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return side.waiters.remove(at: index)
            }
            waiter?.continuation.resume(returning: .failure(.cancelled))
        }
    }

    // MARK: Sending

    private enum SendStep {
        case done
        case armWrite
        case wait
        case failed(TransportError)
    }

    package func send(_ bytes: [UInt8]) async throws(TransportError) {
        let step = writer.withLock { side -> SendStep in
            if let error = side.sendError { return .failed(error) }
            if bytes.isEmpty { return .done }
            guard side.waiters.isEmpty, side.queue.byteCount < sendQueueLimit else { return .wait }
            guard side.queue.isEmpty, side.descriptorOpen else {
                side.queue.append(bytes)
                return .done
            }
            // Nothing queued: write straight from the caller's buffer, queue only the rest.
            var written = 0
            while written < bytes.count {
                switch SocketIO.write(fd, bytes, from: written) {
                case .wrote(let count): written += count
                case .wouldBlock:
                    side.queue.append(bytes, skipping: written)
                    return .armWrite
                case .failed(let error):
                    side.failure = error
                    return .failed(error)
                }
            }
            return .done
        }
        switch step {
        case .done: return
        case .armWrite: registration.want(.write)
        case .failed(let error): throw error
        case .wait: try await waitForRoom(bytes).get()
        }
    }

    private func waitForRoom(_ bytes: [UInt8]) async -> SendResult {
        let id = makeWaiterID()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<SendResult, Never>) in
                let early = writer.withLock { side -> SendResult? in
                    if let error = side.sendError { return .failure(error) }
                    if Task.isCancelled { return .failure(.cancelled) }
                    if side.waiters.isEmpty, side.queue.byteCount < sendQueueLimit {
                        // The reactor made room since `send` looked: queue for it to write.
                        side.queue.append(bytes)
                        return .success(())
                    }
                    side.waiters.append(SendWaiter(id: id, bytes: bytes, continuation: continuation))
                    return nil
                }
                // Either way the queue is non-empty now, so write interest must be armed
                // (it normally is already; then this costs no system call).
                registration.want(.write)
                if let early { continuation.resume(returning: early) }
            }
        } onCancel: {
            let waiter = writer.withLock { side -> SendWaiter? in
                guard let index = side.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return side.waiters.remove(at: index)
            }
            waiter?.continuation.resume(returning: .failure(.cancelled))
        }
    }

    // MARK: Reactor callbacks

    package func reactorEventsArrived(_ events: ReactorEvents) {
        if events.readable { handleReadable() }
        if events.writable { handleWritable() }
    }

    private struct ReadProgress {
        var resumptions: [(CheckedContinuation<ReceiveResult, Never>, ReceiveResult)] = []
        var lingerEnded = false
        var rearm = false
    }

    private func handleReadable() {
        let progress = reader.withLock { side -> ReadProgress in
            var progress = ReadProgress()
            guard side.descriptorOpen else { return progress }
            if side.lingering {
                switch SocketIO.discard(fd) {
                case .wouldBlock, .bytes: progress.rearm = true
                case .endOfStream: side.endOfStream = true
                case .failed(let error): side.failure = error
                }
                if !progress.rearm {
                    side.lingering = false
                    side.lingerDeadline = nil
                    progress.lingerEnded = true
                }
                return progress
            }
            while let first = side.waiters.first {
                guard let result = Self.completeRead(SocketIO.read(fd, maximum: receiveChunkSize), in: &side) else {
                    progress.rearm = true
                    break
                }
                side.waiters.removeFirst()
                progress.resumptions.append((first.continuation, result))
                if let terminal = side.terminal {
                    // End of stream or failure: everyone still waiting gets the same answer.
                    progress.resumptions += side.waiters.map { ($0.continuation, terminal) }
                    side.waiters.removeAll()
                }
            }
            return progress
        }
        // Not wanting read any more matters: the descriptor stays readable, and a re-armed
        // one-shot registration would report it again and again with nobody waiting.
        if progress.rearm { registration.want(.read) } else { registration.unwant(.read) }
        for (continuation, result) in progress.resumptions { continuation.resume(returning: result) }
        if progress.lingerEnded { releaseDescriptor(abortive: false) }
    }

    private struct WriteProgress {
        var admitted: [CheckedContinuation<SendResult, Never>] = []
        var failed: [CheckedContinuation<SendResult, Never>] = []
        var failure: TransportError?
        var flushed: (CheckedContinuation<Bool, Never>, Bool)?
        var rearm = false
    }

    private func handleWritable() {
        let progress = writer.withLock { side -> WriteProgress in
            var progress = WriteProgress()
            guard side.descriptorOpen else { return progress }
            while true {
                // Admit waiting senders while there is room: FIFO, each send contiguous.
                while side.queue.byteCount < sendQueueLimit, !side.waiters.isEmpty {
                    let waiter = side.waiters.removeFirst()
                    side.queue.append(waiter.bytes)
                    progress.admitted.append(waiter.continuation)
                }
                if side.queue.isEmpty { break }
                switch side.queue.write(to: fd) {
                case .wrote:
                    if side.queue.isEmpty { continue }
                    progress.rearm = true
                case .wouldBlock:
                    progress.rearm = true
                case .failed(let error):
                    side.failure = error
                    side.queue.removeAll()
                    progress.failure = error
                    progress.failed = side.waiters.map(\.continuation)
                    side.waiters.removeAll()
                }
                break
            }
            if side.queue.isEmpty, let flush = side.flush {
                side.flush = nil
                side.flushDeadline = nil
                progress.flushed = (flush, side.failure == nil)
            }
            return progress
        }
        if progress.rearm { registration.want(.write) } else { registration.unwant(.write) }
        for continuation in progress.admitted { continuation.resume(returning: .success(())) }
        if let failure = progress.failure {
            for continuation in progress.failed { continuation.resume(returning: .failure(failure)) }
        }
        if let (continuation, flushed) = progress.flushed { continuation.resume(returning: flushed) }
    }

    package func reactorTimerFired(now: MonotonicInstant) -> MonotonicInstant? {
        var next: MonotonicInstant?
        func consider(_ deadline: MonotonicInstant?) {
            if let deadline, next.map({ deadline < $0 }) ?? true { next = deadline }
        }
        let (expired, lingerExpired) = reader.withLock { side -> ([CheckedContinuation<ReceiveResult, Never>], Bool) in
            var expired: [CheckedContinuation<ReceiveResult, Never>] = []
            side.waiters.removeAll { waiter in
                guard let deadline = waiter.deadline, deadline <= now else { return false }
                expired.append(waiter.continuation)
                return true
            }
            var lingerExpired = false
            if side.lingering, let deadline = side.lingerDeadline, deadline <= now {
                side.lingering = false
                side.lingerDeadline = nil
                lingerExpired = true
            }
            side.waiters.forEach { consider($0.deadline) }
            consider(side.lingerDeadline)
            return (expired, lingerExpired)
        }
        let unflushed = writer.withLock { side -> CheckedContinuation<Bool, Never>? in
            guard let deadline = side.flushDeadline else { return nil }
            guard deadline <= now else {
                consider(deadline)
                return nil
            }
            defer {
                side.flush = nil
                side.flushDeadline = nil
            }
            return side.flush
        }
        for continuation in expired { continuation.resume(returning: .failure(.timedOut(.idle))) }
        unflushed?.resume(returning: false)
        if lingerExpired { releaseDescriptor(abortive: false) }
        return next
    }

    // MARK: Closing

    /// See `Connection.close()`. The sequence is the classic graceful close:
    /// 1. refuse new sends and receives; fail senders still waiting for room (their bytes
    ///    were never queued) and pending receives;
    /// 2. flush the queue, bounded by `closeTimeout`; if that fails, close with a reset at
    ///    once, so the peer cannot mistake a truncated stream for a complete one;
    /// 3. `shutdown(SHUT_WR)`: the peer reads everything we sent, then end of stream;
    /// 4. return, while the reactor reads and discards until the peer's own end of stream
    ///    (same deadline) and only then closes the descriptor. Closing a socket with unread
    ///    input makes the kernel answer with a reset that can destroy our data still in
    ///    flight; lingering avoids that, and doing it in the background means the caller
    ///    never waits for the peer (`await a.close(); await b.close()` must not stall).
    package func close() async {
        await close(abortively: false)
    }

    /// Closes at once with a reset, releasing the descriptor now instead of flushing and
    /// lingering: for a connection that is owed nothing (refused over a cap, or silent past
    /// its set-up deadline). A flood of such connections must not hold descriptors through
    /// graceful closes: a process out of descriptors fails every `open`, and libdispatch's
    /// worker monitor crashes the process when it cannot open `/proc/<tid>/stat`.
    package func closeAbortively() async {
        await close(abortively: true)
    }

    private func close(abortively: Bool) async {
        let first = closeState.withLock { state -> Bool in
            guard case .open = state else { return false }
            state = .closing([])
            return true
        }
        guard first else {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let done = closeState.withLock { state -> Bool in
                    guard case .closing(var waiters) = state else { return true }
                    waiters.append(continuation)
                    state = .closing(waiters)
                    return false
                }
                if done { continuation.resume() }
            }
            return
        }
        await performClose(abortively: abortively)
        let waiters = closeState.withLock { state -> [CheckedContinuation<Void, Never>] in
            defer { state = .closed }
            guard case .closing(let waiters) = state else { return [] }
            return waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    private func performClose(abortively: Bool) async {
        if abortively {
            releaseDescriptor(abortive: true)
            return
        }
        let deadline = MonotonicInstant.now().advanced(by: closeTimeout)
        let (refused, mustFlush) = writer.withLock { side -> ([CheckedContinuation<SendResult, Never>], Bool) in
            side.closedLocally = true
            let refused = side.waiters.map(\.continuation)
            side.waiters.removeAll()
            return (refused, side.descriptorOpen && side.failure == nil && !side.queue.isEmpty)
        }
        for continuation in refused { continuation.resume(returning: .failure(.closed)) }
        // Pending receives end now, not after the flush: closing is how a caller unblocks a
        // receive it no longer wants (a handshake deadline, a cancelled session).
        let interrupted = reader.withLock { side -> [CheckedContinuation<ReceiveResult, Never>] in
            side.closedLocally = true
            defer { side.waiters.removeAll() }
            return side.waiters.map(\.continuation)
        }
        for continuation in interrupted { continuation.resume(returning: .failure(.closed)) }

        var flushed = true
        if mustFlush {
            flushed = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let early = writer.withLock { side -> Bool? in
                    if side.failure != nil || !side.descriptorOpen { return false }
                    if side.queue.isEmpty { return true }
                    side.flush = continuation
                    side.flushDeadline = deadline
                    return nil
                }
                if let early {
                    continuation.resume(returning: early)
                    return
                }
                registration.schedule(at: deadline)
                registration.want(.write)
            }
        }
        let graceful = writer.withLock { side -> Bool in
            guard side.descriptorOpen, side.failure == nil, flushed else { return false }
            return Glibc.shutdown(fd, Int32(SHUT_WR)) == 0
        }
        guard graceful else {
            releaseDescriptor(abortive: !flushed)
            return
        }
        let lingering = reader.withLock { side -> Bool in
            guard side.descriptorOpen, side.failure == nil, !side.endOfStream else { return false }
            side.lingering = true
            side.lingerDeadline = deadline
            return true
        }
        if lingering {
            registration.schedule(at: deadline)
            registration.want(.read)
        } else {
            releaseDescriptor(abortive: false)
        }
    }

    /// The handle was dropped without `close()`: close anyway, in the background, so queued
    /// bytes are still delivered and the descriptor is never leaked.
    package func closeInBackground() {
        let open = closeState.withLock { state -> Bool in
            if case .open = state { return true }
            return false
        }
        if open { Task { await self.close() } }
    }

    /// Closes with a reset (tests use it to play a crashing peer).
    package func abort() {
        releaseDescriptor(abortive: true)
    }

    private func releaseDescriptor(abortive: Bool) {
        let (senders, receivers, flush) = writer.withLock { write in
            reader.withLock { read in
                guard write.descriptorOpen else {
                    return ([CheckedContinuation<SendResult, Never>](), [CheckedContinuation<ReceiveResult, Never>](),
                            CheckedContinuation<Bool, Never>?.none)
                }
                write.descriptorOpen = false
                read.descriptorOpen = false
                registration.cancel()
                if abortive { SocketIO.setAbortiveClose(fd) }
                Glibc.close(fd)
                write.queue.removeAll()
                write.closedLocally = true
                read.closedLocally = true
                read.lingering = false
                defer {
                    write.waiters.removeAll()
                    read.waiters.removeAll()
                    write.flush = nil
                }
                return (write.waiters.map(\.continuation), read.waiters.map(\.continuation), write.flush)
            }
        }
        for continuation in senders { continuation.resume(returning: .failure(.closed)) }
        for continuation in receivers { continuation.resume(returning: .failure(.closed)) }
        flush?.resume(returning: false)
    }
}
