import LFSyncSystem

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

    private struct State: Sendable {
        var buffered: [(received: Received, bytes: Int)] = []
        var bufferedBytes = 0
        /// The stream ended (or failed): nothing more will be buffered.
        var ended = false
        /// The owner called `stop()`: nothing more will be delivered.
        var cancelled = false
    }

    private let channel: SecureChannel
    private let byteLimit: Int
    /// The consumer waits here for a message, the reading side for room.
    private let state = Monitor(State())

    package init(channel: SecureChannel, byteLimit: Int = 4 << 20) {
        self.channel = channel
        self.byteLimit = byteLimit
    }

    /// Reads ahead until the end of the stream, a failure other than an idle
    /// timeout, or `stop()` (with the channel closed by its owner). The owner runs it
    /// as a child task beside the loop that calls `next()`.
    package func run() async {
        await readLoop()
    }

    /// The next message, in order: `.success(nil)` at a clean end of stream,
    /// after `stop()` (messages still buffered then are dropped), and when the
    /// waiting task is cancelled.
    package func next() async -> Received {
        await state.wait(orIfCancelled: .success(nil)) { state in
            if state.cancelled { return .success(nil) }
            guard !state.buffered.isEmpty else { return state.ended ? .success(nil) : nil }
            let first = state.buffered.removeFirst()
            state.bufferedBytes -= first.bytes
            return first.received
        }
    }

    /// Stops reading ahead (the channel itself is closed by its owner) and
    /// ends a pending `next()` with the end of the stream.
    package func stop() {
        state.withLock { state in
            state.cancelled = true
            state.buffered.removeAll()
            state.bufferedBytes = 0
        }
    }

    private func readLoop() async {
        let byteLimit = byteLimit
        while true {
            let stopped = await state.wait { state in state.cancelled || state.bufferedBytes < byteLimit ? state.cancelled : nil }
            if stopped { return }
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

    /// Buffers `received` for the consumer. A final result marks the end in
    /// the same critical section, so a consumer asking again right after it
    /// can never wait for a message that will not come.
    private func deliver(_ received: Received, isFinal: Bool) {
        let bytes = Self.size(of: received)
        state.withLock { state in
            if isFinal { state.ended = true }
            guard !state.cancelled else { return }
            state.buffered.append((received, bytes))
            state.bufferedBytes += bytes
        }
    }

    /// What a buffered result costs: its frame (an Offer can be as large as a
    /// Chunk), plus a little for the bookkeeping.
    private static func size(of received: Received) -> Int {
        guard case let .success(incoming?) = received else { return 64 }
        return incoming.frameLength + 64
    }
}
