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

    @Test func aDeadlineAlreadyPassedDoesNotSleep() async throws {
        let clock = ManualClock()
        clock.advance(by: .seconds(5))
        try await clock.sleep(until: clock.now.advanced(by: .seconds(-1)), tolerance: nil)
        #expect(clock.sleeperCount == 0)
    }
}
