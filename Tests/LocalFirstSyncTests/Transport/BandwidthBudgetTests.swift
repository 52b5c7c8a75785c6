import Synchronization
import Testing
import LFSyncTransport
import LocalFirstSyncTesting

/// The run-wide bandwidth budget, on a manual clock: nothing here sleeps, and every
/// deadline is checked to the nanosecond by advancing the clock to just before it.
@Suite(.timeLimit(.minutes(1))) struct BandwidthBudgetTests {
    static let mebibytePerSecond = TransferRate(bytesPerSecond: 1 << 20)
    static let kibibyte = 1024

    /// Advances `clock` to just before `offset` (the sleeper must still be waiting), then to it.
    static func advance(_ clock: ManualClock, toJustBefore offset: Duration, sleepers: Int) {
        clock.advance(by: offset - clock.now.offset - .nanoseconds(1))
        #expect(clock.sleeperCount == sleepers, "a spender woke before \(offset)")
        clock.advance(by: .nanoseconds(1))
    }

    @Test func aSpendWithinTheBurstDoesNotWait() async throws {
        let clock = ManualClock()
        let budget = BandwidthBudget(rate: Self.mebibytePerSecond, clock: clock, burst: 64 * Self.kibibyte)
        try await budget.spend(16 * Self.kibibyte)
        try await budget.spend(48 * Self.kibibyte)
        try await budget.spend(0)
        #expect(clock.now.offset == .zero)
        #expect(clock.sleeperCount == 0)
    }

    @Test func theDefaultBurstIsATenthOfASecondButAtLeast64KiB() {
        #expect(BandwidthBudget(rate: Self.mebibytePerSecond, clock: ManualClock()).burst == 104_857)
        #expect(BandwidthBudget(rate: TransferRate(bytesPerSecond: 100 * 1024), clock: ManualClock()).burst == 64 * 1024)
    }

    /// 10 × 256 KiB at 1 MiB/s is 2.5 s of sending; the full 64 KiB bucket covers the first 62.5 ms.
    @Test func sequentialSpendsRunAtTheRate() async throws {
        let clock = ManualClock()
        let budget = BandwidthBudget(rate: Self.mebibytePerSecond, clock: clock, burst: 64 * Self.kibibyte)
        let (done, reporter) = AsyncStream.makeStream(of: Int.self)
        let sender = Task {
            for index in 0..<10 {
                try await budget.spend(256 * Self.kibibyte)
                reporter.yield(index)
            }
        }
        var completions = done.makeAsyncIterator()
        for index in 0..<10 {
            await clock.waitForSleepers(count: 1)
            // 0.25 s per spend, less the 62.5 ms the burst already paid for.
            Self.advance(clock, toJustBefore: .milliseconds(250) * (index + 1) - .microseconds(62_500), sleepers: 1)
            #expect(await completions.next() == index)
        }
        try await sender.value
        #expect(clock.now.offset == .milliseconds(2_437) + .microseconds(500))
    }

    /// Two senders on one budget alternate, each getting half the rate, the pair the whole of it.
    @Test func twoConcurrentSpendersShareTheRate() async throws {
        let clock = ManualClock()
        let budget = BandwidthBudget(rate: Self.mebibytePerSecond, clock: clock, burst: 64 * Self.kibibyte)
        let (done, reporter) = AsyncStream.makeStream(of: (sender: Int, at: Duration).self)
        let senders = (0..<2).map { sender in
            Task {
                for _ in 0..<4 {
                    try await budget.spend(128 * Self.kibibyte)
                    reporter.yield((sender, clock.now.offset))
                }
            }
        }
        var completions = done.makeAsyncIterator()
        var counts = [0, 0]
        // Each 128 KiB takes 125 ms; the burst covered 62.5 ms of the first.
        for index in 0..<8 {
            let remaining = counts.filter { $0 < 4 }.count
            await clock.waitForSleepers(count: remaining)
            let due = Duration.milliseconds(125) * (index + 1) - .microseconds(62_500)
            Self.advance(clock, toJustBefore: due, sleepers: remaining)
            let completion = try #require(await completions.next())
            #expect(completion.at == due)
            counts[completion.sender] += 1
            #expect(abs(counts[0] - counts[1]) <= 1, "one sender got ahead: \(counts)")
        }
        for sender in senders { try await sender.value }
        #expect(counts == [4, 4])
        #expect(clock.now.offset == .milliseconds(937) + .microseconds(500))
    }

    /// A cancelled spend throws, and gives its reservation back: the bucket is full again.
    @Test func cancellingAWaitingSpendThrowsAndReturnsItsReservation() async throws {
        let clock = ManualClock()
        let budget = BandwidthBudget(rate: Self.mebibytePerSecond, clock: clock, burst: 64 * Self.kibibyte)
        let waiting = Task { try await budget.spend(1 << 20) }
        await clock.waitForSleepers(count: 1)
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        try await budget.spend(64 * Self.kibibyte)
        #expect(clock.sleeperCount == 0)
        #expect(clock.now.offset == .zero)
    }

    /// Cancelled behind another waiter, the reservation is kept, so nobody overtakes that waiter.
    @Test func aCancelledReservationWithOthersBehindItIsKept() async throws {
        let clock = ManualClock()
        let budget = BandwidthBudget(rate: Self.mebibytePerSecond, clock: clock, burst: 0)
        let first = Task { try await budget.spend(128 * Self.kibibyte) }
        await clock.waitForSleepers(count: 1)
        let second = Task { try await budget.spend(128 * Self.kibibyte) }
        await clock.waitForSleepers(count: 2)
        first.cancel()
        await #expect(throws: CancellationError.self) { try await first.value }
        // The second still waits for both reservations: 250 ms.
        Self.advance(clock, toJustBefore: .milliseconds(250), sleepers: 1)
        try await second.value
    }

    @Test func aRateLimitedConnectionPaysBeforeSending() async throws {
        let clock = ManualClock()
        let base = RecordingConnection()
        let budget = BandwidthBudget(rate: TransferRate(bytesPerSecond: 1024), clock: clock, burst: 1024)
        let connection = RateLimitedConnection(base, budget: budget)
        #expect(connection.remoteAddress == base.remoteAddress)
        try await connection.send([UInt8](repeating: 7, count: 1024))
        #expect(base.sent == [1024])
        let sending = Task { try await connection.send([1, 2]) }
        await clock.waitForSleepers(count: 1)
        #expect(base.sent == [1024], "sent before the budget allowed it")
        Self.advance(clock, toJustBefore: .nanoseconds(1_953_125), sleepers: 1)  // 2 bytes at 1 KiB/s
        try await sending.value
        #expect(base.sent == [1024, 2])
        #expect(try await connection.receive() == [1, 2], "receiving is not limited by a send budget")
    }

    @Test func aReceiveBudgetHandsBytesOverOnceItCoversThem() async throws {
        let clock = ManualClock()
        let base = RecordingConnection()
        let budget = BandwidthBudget(rate: TransferRate(bytesPerSecond: 1024), clock: clock, burst: 0)
        let connection = RateLimitedConnection(base, sending: nil, receiving: budget)
        let receiving = Task { try await connection.receive() }
        await clock.waitForSleepers(count: 1)
        Self.advance(clock, toJustBefore: .nanoseconds(1_953_125), sleepers: 1)
        #expect(try await receiving.value == [1, 2])
        try await connection.send([UInt8](repeating: 0, count: 4096))
        #expect(base.sent == [4096], "sending is not limited by a receive budget")
        // Cancelled while held back, the bytes are still delivered: they have left the stream.
        let cancelled = Task { try await connection.receive() }
        await clock.waitForSleepers(count: 1)
        cancelled.cancel()
        #expect(try await cancelled.value == [1, 2])
    }

    @Test func aRateLimitedSendCancelledWhileWaitingIsNotQueued() async throws {
        let clock = ManualClock()
        let base = RecordingConnection()
        let connection = RateLimitedConnection(base, budget: BandwidthBudget(rate: TransferRate(bytesPerSecond: 1024), clock: clock, burst: 0))
        let sending = Task { try await connection.send([1, 2, 3]) }
        await clock.waitForSleepers(count: 1)
        sending.cancel()
        await #expect(throws: TransportError.cancelled) { try await sending.value }
        #expect(base.sent.isEmpty)
    }
}

/// Records what is sent; every receive returns two bytes.
private final class RecordingConnection: Connection {
    private let sizes = Mutex<[Int]>([])
    var sent: [Int] { sizes.withLock { $0 } }
    var remoteAddress: PeerAddress? { PeerAddress(host: "peer", port: 7000) }
    func send(_ bytes: [UInt8]) async throws(TransportError) { sizes.withLock { $0.append(bytes.count) } }
    func receive() async throws(TransportError) -> [UInt8]? { [1, 2] }
    func close() async {}
}
