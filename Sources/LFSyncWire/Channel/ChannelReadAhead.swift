import Synchronization

/// Receives and decrypts a channel's next messages while its consumer is
/// still handling the current one, up to `byteLimit` bytes of frames ahead
/// (plus one message).
///
/// Without it a receiver alternates: decrypt a chunk, then hash and write it,
/// then decrypt the next. With it the two halves run on both cores at once:
/// this side decrypts and decodes the next messages while the consumer
/// extends the file hash and writes the current chunk. Memory stays bounded:
/// the reading side waits while the buffer is full.
package final class ChannelReadAhead: Sendable {
    package struct Incoming: Sendable {
        package var message: WireMessage
        /// The frame's length on the wire: what buffering this message costs.
        var frameLength: Int
    }

    package typealias Received = Result<Incoming?, SecureChannelError>

    private struct State {
        var buffered: [(received: Received, bytes: Int)] = []
        var bufferedBytes = 0
        var consumer: CheckedContinuation<Received, Never>?
        var producer: CheckedContinuation<Void, Never>?
        /// The stream ended (or failed): nothing more will be buffered.
        var ended = false
        /// The owner called `stop()`: nothing more will be delivered.
        var cancelled = false
    }

    private let channel: SecureChannel
    private let byteLimit: Int
    private let state = Mutex(State())

    package init(channel: SecureChannel, byteLimit: Int = 4 << 20) {
        self.channel = channel
        self.byteLimit = byteLimit
    }

    /// Starts reading ahead; the task ends at the end of the stream, on a
    /// failure other than an idle timeout, or after `stop()`.
    package func start() {
        Task { await self.readLoop() }
    }

    /// The next message, in order: `.success(nil)` at a clean end of stream,
    /// and after `stop()` (messages still buffered then are dropped).
    package func next() async -> Received {
        await withCheckedContinuation { (continuation: CheckedContinuation<Received, Never>) in
            let (ready, producer) = state.withLock { state -> (Received?, CheckedContinuation<Void, Never>?) in
                if state.cancelled { return (.success(nil), nil) }
                guard !state.buffered.isEmpty else {
                    if state.ended { return (.success(nil), nil) }
                    state.consumer = continuation
                    return (nil, nil)
                }
                let first = state.buffered.removeFirst()
                state.bufferedBytes -= first.bytes
                let producer = state.bufferedBytes < byteLimit ? state.producer.take() : nil
                return (first.received, producer)
            }
            producer?.resume()
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// Stops reading ahead (the channel itself is closed by its owner) and
    /// ends a pending `next()` with the end of the stream.
    package func stop() {
        let (producer, consumer) = state.withLock { state in
            state.cancelled = true
            state.buffered.removeAll()
            state.bufferedBytes = 0
            return (state.producer.take(), state.consumer.take())
        }
        producer?.resume()
        consumer?.resume(returning: .success(nil))
    }

    private func readLoop() async {
        while true {
            await waitForRoom()
            if state.withLock({ $0.cancelled }) { return }
            let received: Received
            do {
                received = .success(try await channel.receiveWithLength().map { Incoming(message: $0.message, frameLength: $0.frameLength) })
            } catch {
                received = .failure(error)
            }
            let isFinal: Bool = switch received {
            case .success(.some): false
            case .failure(.transport(.timedOut(.idle))): false  // only a quiet peer: the stream is intact
            case .success(.none), .failure: true
            }
            deliver(received, isFinal: isFinal)
            if isFinal { return }
        }
    }

    private func waitForRoom() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let mustWait = state.withLock { state -> Bool in
                guard !state.cancelled, state.bufferedBytes >= byteLimit else { return false }
                state.producer = continuation
                return true
            }
            if !mustWait { continuation.resume() }
        }
    }

    /// Hands `received` to a waiting consumer or buffers it. A final result
    /// marks the end in the same critical section, so a consumer asking again
    /// right after it can never wait for a message that will not come.
    private func deliver(_ received: Received, isFinal: Bool) {
        let bytes = Self.size(of: received)
        let consumer = state.withLock { state -> CheckedContinuation<Received, Never>? in
            if isFinal { state.ended = true }
            if state.cancelled { return nil }
            if let consumer = state.consumer.take() { return consumer }
            state.buffered.append((received, bytes))
            state.bufferedBytes += bytes
            return nil
        }
        consumer?.resume(returning: received)
    }

    /// What a buffered result costs: its frame (an Offer can be as large as a
    /// Chunk), plus a little for the bookkeeping.
    private static func size(of received: Received) -> Int {
        guard case let .success(incoming?) = received else { return 64 }
        return incoming.frameLength + 64
    }
}
