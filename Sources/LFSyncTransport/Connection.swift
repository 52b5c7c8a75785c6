/// One established, reliable, ordered byte stream to a peer.
///
/// The seam the engine talks to, so that the same engine code runs over TCP in production
/// and over `InMemoryTransport` (with injected faults) in tests. It carries bytes, not
/// messages: one `send` may arrive split over several `receive`s and vice versa; framing
/// belongs to the Wire layer.
///
/// Concurrency: any task may call any method. Concurrent `send`s each enqueue their bytes
/// contiguously (never interleaved inside one call), in the order they gain room in the
/// queue; concurrent `receive`s are served first come, first served.
public protocol Connection: Sendable {
    /// The peer's address as seen by this side (for TCP the numeric address, never a name).
    var remoteAddress: PeerAddress? { get }

    /// Queues `bytes` for sending.
    ///
    /// Suspends while the bounded send queue is full: that suspension *is* the backpressure
    /// that keeps a fast producer from buffering a whole file in memory. Returns once the
    /// bytes are queued (or already written), which is not a delivery receipt: a later
    /// failure surfaces on the next `send` or `receive`. Sending an empty array does nothing.
    ///
    /// - Throws: `.closed` after `close()`, `.cancelled` if the task is cancelled while
    ///   waiting (the bytes were then not queued), `.connectionReset` when the peer is gone.
    func send(_ bytes: [UInt8]) async throws(TransportError)

    /// The next bytes from the peer (at most the transport's receive chunk size), or nil
    /// once the peer has closed its side and every byte before that was delivered (again nil
    /// on every later call).
    ///
    /// - Throws: `.timedOut(.idle)` when nothing arrives within the idle timeout (the
    ///   connection stays usable), `.closed` after (or during) a local `close()`,
    ///   `.cancelled`, `.connectionReset`.
    func receive() async throws(TransportError) -> [UInt8]?

    /// Flushes queued bytes (bounded by a timeout), signals end-of-stream to the peer and
    /// releases the connection. Idempotent; concurrent callers all return once it is done.
    /// Pending receives end with `.closed` at once, pending sends with `.closed` (unqueued).
    ///
    /// Returns without waiting for the peer: TCP keeps reading and discarding in the
    /// background until the peer closes too (bounded by the same timeout), so a reset caused
    /// by unread input cannot destroy data still in flight. Dropping the last reference
    /// without calling `close()` closes in the background as well.
    func close() async

    /// Closes at once, without flushing or waiting for the peer (TCP sends a reset), so the
    /// connection's resources are free now: for a peer that is owed nothing — refused over
    /// a cap, or silent past its set-up deadline. Idempotent, like `close()`.
    func abort() async
}

extension Connection {
    /// Transports without a graceful close to skip (the in-memory one) simply close.
    public func abort() async {
        await close()
    }
}
