/// When `watch` runs its next pass, decided from what happened and when:
/// a value with no clock of its own, so tests drive it with plain instants.
///
/// A change is sent once it has **settled** — nothing changed for `settle`
/// (the scan cache's rule, so a file still being written is never sent) — but
/// never later than `maxDelay` after the first change of a burst, so a folder
/// that never stops changing still goes out in slices. A camera import of a
/// thousand photos is one burst: one or a few passes, each a few offers.
struct WatchSchedule {
    var settle: Duration
    var maxDelay: Duration

    /// `settle` in nanoseconds, to compare with file times.
    var settleNs: Int64 {
        settle.components.seconds * 1_000_000_000 + settle.components.attoseconds / 1_000_000_000
    }
    /// Set when inotify cannot be relied on (the watch limit was reached): a pass this often.
    var rescanInterval: Duration?

    private var firstChange: ContinuousClock.Instant?
    private var lastChange: ContinuousClock.Instant?
    /// The earliest moment files a pass left out (not settled yet) will have settled.
    private var recheck: ContinuousClock.Instant?
    private var lastPass: ContinuousClock.Instant?
    /// A peer back, an overflow, start-up: run a pass as soon as possible.
    private var requested: ContinuousClock.Instant?

    init(settle: Duration, maxDelay: Duration, rescanInterval: Duration? = nil) {
        self.settle = settle
        self.maxDelay = maxDelay
        self.rescanInterval = rescanInterval
    }

    mutating func changed(at now: ContinuousClock.Instant) {
        if firstChange == nil { firstChange = now }
        lastChange = now
    }

    /// Something needs a pass now (start-up, an overflowed event queue, a peer back).
    mutating func requestPass(at now: ContinuousClock.Instant) {
        requested = min(requested ?? now, now)
    }

    /// A pass left out files that had not settled; they will have at `instant`.
    mutating func recheck(at instant: ContinuousClock.Instant) {
        recheck = min(recheck ?? instant, instant)
    }

    /// A pass starts: what it will see is no longer pending. Changes arriving
    /// during the pass start a new burst.
    mutating func passStarted(at now: ContinuousClock.Instant) {
        firstChange = nil
        lastChange = nil
        recheck = nil
        requested = nil
        lastPass = now
    }

    /// When the next pass is due, or nil when nothing is pending (idle: no wake-ups).
    var nextPass: ContinuousClock.Instant? {
        var due: [ContinuousClock.Instant] = []
        if let lastChange, let firstChange { due.append(min(lastChange + settle, firstChange + maxDelay)) }
        if let recheck { due.append(recheck) }
        if let rescanInterval, let lastPass { due.append(lastPass + rescanInterval) }
        if let requested { due.append(requested) }
        return due.min()
    }

    /// Whether a pass is due at `now`.
    func isDue(at now: ContinuousClock.Instant) -> Bool {
        nextPass.map { $0 <= now } ?? false
    }
}
