/// How long a sender waits, with every chunk sent, for the next Receipt
/// before it gives up on the peer (PROTOCOL.md, "Limits and deadlines").
///
/// A receiver that is alive and honest sends a Receipt as each asset lands,
/// so silence can only be excused by work still in front of its disk: the
/// deadline is a base for fsyncs and a busy machine, plus the bytes still
/// unconfirmed at a rate any disk manages. A receiver that stalls, or a relay
/// that swallows everything, costs a cron push at most that long — never its
/// lock for ever.
///
/// It keeps no clock of its own: the watcher reports the time that passed
/// (on the engine's injected clock), so tests drive it with plain durations.
struct ReceiptDeadline: Sendable, Equatable {
    static let base: Duration = .seconds(120)
    /// Bytes per second the slowest disk we wait for still writes.
    static let slowestDiskRate: UInt64 = 1 << 20

    /// The longest silence allowed while `owedBytes` wait for their Receipts.
    static func silence(owedBytes: UInt64) -> Duration {
        base + .seconds(Int64(min(owedBytes / slowestDiskRate, UInt64(Int64.max / 2))))
    }

    /// Time since the last Receipt (or since the wait began).
    private(set) var silent: Duration = .zero

    /// A Receipt (or anything counting as progress) arrived.
    mutating func heard() {
        silent = .zero
    }

    mutating func passed(_ duration: Duration) {
        silent += duration
    }

    /// Whether the wait is over: true once the silence outlasts what `owedBytes` excuse.
    func hasExpired(owedBytes: UInt64) -> Bool {
        silent > Self.silence(owedBytes: owedBytes)
    }
}
