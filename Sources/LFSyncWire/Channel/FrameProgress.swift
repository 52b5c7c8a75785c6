/// Whether a frame in flight is still coming at a useful rate
/// (`WireProtocol.minimumFrameRate` after `WireProtocol.frameGrace`).
///
/// Only time spent *waiting for the peer* counts: while this side stops
/// reading (its disk is behind, say) the peer cannot send, and that must not
/// be held against it. A value with no clock of its own: the reader reports
/// each wait and what it brought, so tests drive it with plain durations.
package struct FrameProgress: Sendable {
    package let minimumRate: Int
    package let grace: Duration
    private var waited: Duration = .zero
    private var bytes = 0

    package init(minimumRate: Int = WireProtocol.minimumFrameRate, grace: Duration = WireProtocol.frameGrace) {
        self.minimumRate = minimumRate
        self.grace = grace
    }

    /// A frame was completed (or nothing is in flight): the next one starts afresh.
    package mutating func reset() {
        waited = .zero
        bytes = 0
    }

    /// How long the peer may now stay silent before the frame in flight is too
    /// slow even if nothing more comes: past both the grace and the time its
    /// bytes so far would have taken at the minimum rate.
    package var silenceAllowed: Duration {
        let atRate = Duration.seconds(Double(bytes) / Double(minimumRate))
        return max(grace - waited, atRate - waited, .zero) + .milliseconds(1)
    }

    /// One wait for the peer that brought `count` bytes while a frame was in
    /// flight. Throws once the frame is too slow.
    package mutating func waited(_ duration: Duration, received count: Int) throws(SecureChannelError) {
        waited += duration
        bytes += count
        guard waited > grace else { return }
        let seconds = Double(waited.components.seconds) + Double(waited.components.attoseconds) / 1e18
        if Double(bytes) < Double(minimumRate) * seconds { throw .stalled(bytes: bytes, waited: waited) }
    }
}
