/// A connection whose traffic draws on shared `BandwidthBudget`s: how
/// `--bwlimit` reaches every transport without each one knowing about it.
///
/// Sends pay before the bytes are handed on, so a send is never queued ahead
/// of the rate (the bytes count even if the connection then refuses them as
/// closed — a little less throughput, never more than the limit). Receives pay
/// after the bytes arrive, by handing them over late: the bytes' size is only
/// known then, and a reader that reads slower makes TCP slow the sender down.
package struct RateLimitedConnection: Connection {
    private let base: any Connection
    private let sending: BandwidthBudget?
    private let receiving: BandwidthBudget?

    /// Limits what is sent; receiving is left to the sender at the other end.
    public init(_ base: any Connection, budget: BandwidthBudget) {
        self.init(base, sending: budget, receiving: nil)
    }

    /// Limits each direction by its own budget; nil leaves that direction unlimited.
    public init(_ base: any Connection, sending: BandwidthBudget?, receiving: BandwidthBudget?) {
        self.base = base
        self.sending = sending
        self.receiving = receiving
    }

    public var remoteAddress: PeerAddress? { base.remoteAddress }

    /// Waits for the budget, then sends as the wrapped connection does.
    ///
    /// - Throws: `.cancelled` if the task is cancelled while waiting for the
    ///   budget (the bytes were then not queued, as `Connection.send` promises),
    ///   or whatever the wrapped `send` throws.
    public func send(_ bytes: [UInt8]) async throws(TransportError) {
        if let sending {
            do {
                try await sending.spend(bytes.count)
            } catch {
                // A clock's sleep throws only when the task is cancelled.
                throw .cancelled
            }
        }
        try await base.send(bytes)
    }

    /// Receives as the wrapped connection does, then holds the bytes until the
    /// receiving budget covers them.
    ///
    /// Cancellation during that wait still returns the bytes: they have left
    /// the wrapped connection, and dropping them would corrupt the stream. The
    /// cancelled task finds out at its next wait.
    public func receive() async throws(TransportError) -> [UInt8]? {
        let bytes = try await base.receive()
        if let receiving, let bytes {
            try? await receiving.spend(bytes.count)
        }
        return bytes
    }

    public func close() async {
        await base.close()
    }

    /// Passed on explicitly, so a TCP connection still resets instead of
    /// falling back to the protocol's default graceful close.
    public func abort() async {
        await base.abort()
    }
}
