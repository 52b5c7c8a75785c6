import Synchronization
import Testing
import LocalFirstSyncTesting

/// The test clock every engine deadline test drives.
@Suite struct ManualClockTests {
    @Test func aSleeperWakesOnlyOnceTimeReachesItsDeadline() async throws {
        let clock = ManualClock()
        let sleeper = Task { try await clock.sleep(until: clock.now.advanced(by: .seconds(10)), tolerance: nil) }
        await clock.waitForSleepers(count: 1)
        clock.advance(by: .seconds(9))
        #expect(clock.sleeperCount == 1)
        clock.advance(by: .seconds(1))
        try await sleeper.value
        #expect(clock.sleeperCount == 0)
        #expect(clock.now.offset == .seconds(10))
    }

    @Test func oneAdvanceWakesEverySleeperDueAndEndsAtItsTarget() async throws {
        let clock = ManualClock()
        var sleepers: [Task<Void, any Error>] = []
        for seconds in [30, 10, 20, 90] {
            sleepers.append(Task { try await clock.sleep(until: clock.now.advanced(by: .seconds(seconds)), tolerance: nil) })
        }
        await clock.waitForSleepers(count: 4)
        clock.advance(by: .seconds(45))
        for sleeper in sleepers.prefix(3) { try await sleeper.value }
        #expect(clock.sleeperCount == 1)
        #expect(clock.now.offset == .seconds(45))
        sleepers[3].cancel()
        await #expect(throws: CancellationError.self) { try await sleepers[3].value }
        #expect(clock.sleeperCount == 0)
    }

    /// What the liveness test needs: waiting for one timer is not satisfied by another.
    @Test func waitingForASleeperByDeadlineIgnoresOtherTimers() async throws {
        let clock = ManualClock()
        let other = Task { try await clock.sleep(until: clock.now.advanced(by: .seconds(600)), tolerance: nil) }
        await clock.waitForSleepers(count: 1)
        let armed = LockedFlag()
        let waiter = Task {
            await clock.waitForSleeper(until: ManualClock.Instant(offset: .seconds(60)))
            #expect(armed.isSet, "returned before the timer it waits for was armed")
        }
        try await Task.sleep(for: .milliseconds(50))
        armed.set()
        let timer = Task { try await clock.sleep(until: ManualClock.Instant(offset: .seconds(60)), tolerance: nil) }
        await waiter.value
        other.cancel()
        timer.cancel()
    }

    @Test func aDeadlineAlreadyPassedDoesNotSleep() async throws {
        let clock = ManualClock()
        clock.advance(by: .seconds(5))
        try await clock.sleep(until: clock.now.advanced(by: .seconds(-1)), tolerance: nil)
        #expect(clock.sleeperCount == 0)
    }
}

/// A flag set once, read from another task.
private final class LockedFlag: Sendable {
    private let state = Mutex(false)
    var isSet: Bool { state.withLock { $0 } }
    func set() { state.withLock { $0 = true } }
}
