#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import LFSyncSystem
import LFSyncTransport

/// The state machine of one established TCP connection, shared by its handle
/// (`TCPConnection`) and the reactor.
///
/// The two directions are independent, each a `Monitor` of its own, so a large write on
/// one thread never holds up a read on another. Every system call on the descriptor
/// happens under the lock of its direction, and the descriptor is closed only while
/// holding both (writer, then reader — the one lock order used): no call can ever reach a
/// closed or reused descriptor number.
///
/// A receive or send states what it waits for as a condition that performs the system call
/// itself, under the lock: at once on the caller's task, and again whenever the reactor
/// reports the descriptor ready (or a deadline passes). Only "would block" parks the
/// caller, and the descriptor is armed once it is parked (`whenParked`), so the readiness
/// report finds it waiting.
final class TCPConnectionCore: ReactorHandler, Sendable {
    package typealias ReceiveResult = Result<[UInt8]?, TransportError>
    package typealias SendResult = Result<Void, TransportError>

    private struct ReadSide: Sendable {
        var endOfStream = false
        var failure: TransportError?
        var closedLocally = false
        var descriptorOpen = true
        /// The idle deadline of each receive waiting, for the reactor's timer.
        var deadlines: [UInt64: MonotonicInstant] = [:]
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

    private struct WriteSide: Sendable {
        var queue = OutboundQueue()
        var failure: TransportError?
        var closedLocally = false
        var descriptorOpen = true
        /// `close()` waiting for the queue to drain, until this deadline.
        var flushDeadline: MonotonicInstant?

        var sendError: TransportError? {
            closedLocally ? .closed : failure
        }
    }

    private enum CloseState: Sendable {
        case open
        case closing
        case closed
    }

    /// What a send did: done (written or queued), queued with the rest for the reactor to
    /// write (arm write interest), or failed.
    private enum SendStep: Sendable {
        case done
        case armWrite
        case failed(TransportError)
    }

    package let registration: ReactorRegistration
    private let receiveChunkSize: Int
    private let sendQueueLimit: Int
    private let idleTimeout: Duration?
    private let closeTimeout: Duration
    private let reader = Monitor(ReadSide())
    private let writer = Monitor(WriteSide())
    private let closeState = Monitor(CloseState.open)
    private let waiterIDs = Atomic<UInt64>(0)

    package var fd: Int32 { registration.fd }

    package init(registration: ReactorRegistration, configuration: TCPTransport.Configuration) {
        self.registration = registration
        self.receiveChunkSize = max(1, configuration.receiveChunkSize)
        self.sendQueueLimit = max(1, configuration.sendQueueLimitBytes)
        self.idleTimeout = configuration.idleTimeout
        self.closeTimeout = configuration.closeTimeout
    }

    // MARK: Receiving

    package func receive() async throws(TransportError) -> [UInt8]? {
        let id = waiterIDs.wrappingAdd(1, ordering: .relaxed).oldValue
        let deadline = idleTimeout.map { MonotonicInstant.now().advanced(by: $0) }
        let registration = registration
        let result = await reader.wait(orIfCancelled: ReceiveResult.failure(.cancelled), until: { [self] side in
            if let result = attemptRead(&side, deadline: deadline) {
                side.deadlines[id] = nil
                return result
            }
            if let deadline { side.deadlines[id] = deadline }
            return nil
        }, whenParked: {
            registration.want(.read)
            if let deadline { registration.schedule(at: deadline) }
        })
        if case .failure(.cancelled) = result { reader.withLock { _ = $0.deadlines.removeValue(forKey: id) } }
        return try result.get()
    }

    /// One receive's turn under the read lock: the end of the stream, the bytes a read
    /// returns, or its idle deadline passed; nil when it must wait.
    private func attemptRead(_ side: inout ReadSide, deadline: MonotonicInstant?) -> ReceiveResult? {
        if let terminal = side.terminal { return terminal }
        if side.descriptorOpen, !side.lingering,
           let result = Self.completeRead(SocketIO.read(fd, maximum: receiveChunkSize), in: &side) {
            return result
        }
        if let deadline, MonotonicInstant.now() >= deadline { return .failure(.timedOut(.idle)) }
        return nil
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

    // MARK: Sending

    package func send(_ bytes: [UInt8]) async throws(TransportError) {
        let registration = registration
        let step = await writer.wait(orIfCancelled: SendStep.failed(.cancelled), until: { [self] side in
            if let error = side.sendError { return .failed(error) }
            if bytes.isEmpty { return .done }
            guard side.queue.byteCount < sendQueueLimit else { return nil }
            return enqueue(bytes, &side)
        }, whenParked: {
            // The queue is full, so write interest is normally armed already (then this costs
            // no system call).
            registration.want(.write)
        })
        switch step {
        case .done: return
        case .armWrite: registration.want(.write)
        case .failed(let error): throw error
        }
    }

    /// Writes `bytes` straight from the caller's buffer when nothing is queued, and queues
    /// what the socket does not take; behind a queue, only queues. The caller holds the lock
    /// and has checked there is room.
    private func enqueue(_ bytes: [UInt8], _ side: inout WriteSide) -> SendStep {
        guard side.queue.isEmpty, side.descriptorOpen else {
            side.queue.append(bytes)
            return .done
        }
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

    // MARK: Reactor callbacks

    package func reactorEventsArrived(_ events: ReactorEvents) {
        if events.readable { handleReadable() }
        if events.writable { handleWritable() }
    }

    private func handleReadable() {
        // Lingering after a close: read and discard until the peer's end of stream. Otherwise
        // the change wakes the waiting receives, each of which reads for itself.
        let (lingerEnded, stillLingering) = reader.withLock { side -> (Bool, Bool) in
            guard side.descriptorOpen, side.lingering else { return (false, false) }
            switch SocketIO.discard(fd) {
            case .wouldBlock, .bytes: return (false, true)
            case .endOfStream: side.endOfStream = true
            case .failed(let error): side.failure = error
            }
            side.lingering = false
            side.lingerDeadline = nil
            return (true, false)
        }
        // Not wanting read any more matters: the descriptor stays readable, and a re-armed
        // one-shot registration would report it again and again with nobody waiting.
        if stillLingering || reader.waiterCount > 0 { registration.want(.read) } else { registration.unwant(.read) }
        if lingerEnded { releaseDescriptor(abortive: false) }
    }

    private func handleWritable() {
        // Writes what is queued; the change then admits waiting senders, in order, each
        // writing straight to the socket if the queue emptied.
        writer.withLock { side in
            guard side.descriptorOpen, side.failure == nil, !side.queue.isEmpty else { return }
            switch side.queue.write(to: fd) {
            case .wrote, .wouldBlock: break
            case .failed(let error):
                side.failure = error
                side.queue.removeAll()
            }
        }
        // Read after the senders let through have queued what the socket did not take.
        let rearm = writer.withLock { side in side.descriptorOpen && side.failure == nil && !side.queue.isEmpty }
        if rearm { registration.want(.write) } else { registration.unwant(.write) }
    }

    package func reactorTimerFired(now: MonotonicInstant) -> MonotonicInstant? {
        var next: MonotonicInstant?
        func consider(_ deadline: MonotonicInstant?) {
            if let deadline, deadline > now, next.map({ deadline < $0 }) ?? true { next = deadline }
        }
        // Each lock's change lets the receives (or the flush) past their deadlines go; the
        // deadlines still ahead decide when to fire next.
        let lingerExpired = reader.withLock { side -> Bool in
            side.deadlines.values.forEach { consider($0) }
            guard side.lingering, let deadline = side.lingerDeadline else { return false }
            guard deadline <= now else {
                consider(deadline)
                return false
            }
            side.lingering = false
            side.lingerDeadline = nil
            return true
        }
        writer.withLock { side in consider(side.flushDeadline) }
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
            state = .closing
            return true
        }
        guard first else {
            // A second close returns once the first has finished.
            await closeState.wait { state in
                if case .closed = state { return () }
                return nil
            }
            return
        }
        await performClose(abortively: abortively)
        closeState.withLock { $0 = .closed }
    }

    private func performClose(abortively: Bool) async {
        if abortively {
            releaseDescriptor(abortive: true)
            return
        }
        let deadline = MonotonicInstant.now().advanced(by: closeTimeout)
        // Senders still waiting for room fail (their bytes were never queued).
        let mustFlush = writer.withLock { side -> Bool in
            side.closedLocally = true
            return side.descriptorOpen && side.failure == nil && !side.queue.isEmpty
        }
        // Pending receives end now, not after the flush: closing is how a caller unblocks a
        // receive it no longer wants (a handshake deadline, a cancelled session).
        reader.withLock { $0.closedLocally = true }

        var flushed = true
        if mustFlush {
            writer.withLock { $0.flushDeadline = deadline }
            let registration = registration
            flushed = await writer.wait(until: { side in
                if side.failure != nil || !side.descriptorOpen { return false }
                if side.queue.isEmpty { return true }
                if MonotonicInstant.now() >= deadline { return false }
                return nil
            }, whenParked: {
                registration.schedule(at: deadline)
                registration.want(.write)
            })
            writer.withLock { $0.flushDeadline = nil }
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

    /// Closes the descriptor under both locks; every receive, send and flush still waiting
    /// ends (`.closed`, or not flushed) as the changes let them through.
    private func releaseDescriptor(abortive: Bool) {
        writer.withLock { write in
            reader.withLock { read in
                guard write.descriptorOpen else { return }
                write.descriptorOpen = false
                read.descriptorOpen = false
                registration.cancel()
                if abortive { SocketIO.setAbortiveClose(fd) }
                Glibc.close(fd)
                write.queue.removeAll()
                write.closedLocally = true
                read.closedLocally = true
                read.lingering = false
            }
        }
    }
}
