import Testing
@testable import LFSyncSystem

/// `Monitor`: the one "wait until a condition holds" every back-pressure and
/// readiness wait is built on.
@Suite struct MonitorTests {
    /// Waits until `monitor` has `count` parked waiters (they park asynchronously).
    static func untilParked<State>(_ monitor: Monitor<State>, count: Int) async {
        while monitor.waiterCount < count { await Task.yield() }
    }

    @Test func aConditionThatAlreadyHoldsReturnsAtOnce() async {
        let monitor = Monitor(3)
        let value = await monitor.wait(orIfCancelled: -1) { $0 > 2 ? $0 * 10 : nil }
        #expect(value == 30)
        #expect(monitor.waiterCount == 0)
    }

    @Test func aChangeThroughWithLockWakesTheWaiterWithWhatItTook() async {
        let monitor = Monitor([Int]())
        let waiter = Task {
            await monitor.wait(orIfCancelled: nil) { queue -> Int?? in
                queue.isEmpty ? nil : .some(queue.removeFirst())
            }
        }
        await Self.untilParked(monitor, count: 1)
        monitor.withLock { $0.append(7) }
        #expect(await waiter.value == 7)
        // It took the element as it passed.
        #expect(monitor.withLock { $0 } == [])
    }

    /// A semaphore of one slot: checking and taking are one step, so the
    /// second waiter passes only after the first gives the slot back.
    @Test func twoWaitersNeverTakeTheSameSlot() async {
        let monitor = Monitor(0)
        let take: @Sendable (inout Int) -> Bool? = { inUse in
            guard inUse == 0 else { return nil }
            inUse = 1
            return true
        }
        #expect(await monitor.wait(orIfCancelled: false, until: take))
        let second = Task { await monitor.wait(orIfCancelled: false, until: take) }
        await Self.untilParked(monitor, count: 1)
        monitor.withLock { _ in }  // a change that frees nothing lets nobody through
        #expect(monitor.waiterCount == 1)
        monitor.withLock { $0 = 0 }
        #expect(await second.value)
        #expect(monitor.withLock { $0 } == 1)
    }

    @Test func waitersAreTriedInTheOrderTheyCame() async {
        struct Tickets: Sendable { var available = 0; var takenBy: [Int] = [] }
        let monitor = Monitor(Tickets())
        var tasks: [Task<Void, Never>] = []
        for index in 0..<5 {
            tasks.append(Task {
                _ = await monitor.wait(orIfCancelled: false) { tickets -> Bool? in
                    guard tickets.available > 0 else { return nil }
                    tickets.available -= 1
                    tickets.takenBy.append(index)
                    return true
                }
            })
            await Self.untilParked(monitor, count: index + 1)
        }
        monitor.withLock { $0.available = 5 }
        for task in tasks { await task.value }
        #expect(monitor.withLock { $0.takenBy } == [0, 1, 2, 3, 4])
    }

    @Test func cancellingAWaiterEndsItsWaitWithTheCancelledValueAndForgetsIt() async {
        let monitor = Monitor(false)
        let waiter = Task { await monitor.wait(orIfCancelled: "cancelled") { $0 ? "through" : nil } }
        await Self.untilParked(monitor, count: 1)
        waiter.cancel()
        #expect(await waiter.value == "cancelled")
        #expect(monitor.waiterCount == 0)
        // A change after the cancellation resumes nobody (a second resume would trap).
        monitor.withLock { $0 = true }
    }

    @Test func aTaskCancelledBeforeItWaitsDoesNotPark() async {
        let monitor = Monitor(false)
        let waiter = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await monitor.wait(orIfCancelled: 0) { $0 ? 1 : nil }
        }
        #expect(await waiter.value == 0)
        #expect(monitor.waiterCount == 0)
    }

    /// A turn that must be taken: cancellation does not end this wait, the condition does.
    @Test func aWaitRegardlessOfCancellationEndsOnlyWhenItsConditionHolds() async {
        let monitor = Monitor(false)
        let waiter = Task { await monitor.wait { $0 ? "through" : nil } }
        await Self.untilParked(monitor, count: 1)
        waiter.cancel()
        for _ in 0..<100 { await Task.yield() }
        #expect(monitor.waiterCount == 1)
        monitor.withLock { $0 = true }
        #expect(await waiter.value == "through")
    }

    /// Many tasks share three slots: at no moment do more than three hold one.
    @Test func underContentionTheLimitHolds() async {
        struct Slots: Sendable { var inUse = 0; var most = 0 }
        let monitor = Monitor(Slots())
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<64 {
                group.addTask {
                    for _ in 0..<20 {
                        _ = await monitor.wait(orIfCancelled: false) { slots -> Bool? in
                            guard slots.inUse < 3 else { return nil }
                            slots.inUse += 1
                            slots.most = max(slots.most, slots.inUse)
                            return true
                        }
                        await Task.yield()
                        monitor.withLock { $0.inUse -= 1 }
                    }
                }
            }
        }
        let slots = monitor.withLock { $0 }
        #expect(slots.inUse == 0)
        #expect(slots.most <= 3)
        #expect(monitor.waiterCount == 0)
    }
}
