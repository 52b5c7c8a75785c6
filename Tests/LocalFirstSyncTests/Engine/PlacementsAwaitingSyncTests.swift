import Testing
@testable import LocalFirstSync
@testable import LFSyncContent
@testable import LFSyncCrypto

/// Files a push a sync follows placed wait for that sync rather than being recorded as
/// this device's own edits; each waits only as long as the sync can still come.
@Suite struct PlacementsAwaitingSyncTests {
    static let nas = DeviceID(publicKey: [UInt8](repeating: 1, count: 32))
    static let laptop = DeviceID(publicKey: [UInt8](repeating: 2, count: 32))

    @Test func aPlacementWaitsForItsPeersSyncOnly() {
        let placements = PlacementsAwaitingSync()
        let now = ContinuousClock.now
        placements.add(["Camera/DSC_0100.NEF.xmp"], from: Self.nas, now: now)
        placements.add(["Documents/todo.txt"], from: Self.laptop, now: now)
        #expect(placements.paths(now: now) == ["Camera/DSC_0100.NEF.xmp", "Documents/todo.txt"])
        placements.release(from: Self.nas)
        #expect(placements.paths(now: now) == ["Documents/todo.txt"], "the laptop's sync has not come yet")
    }

    @Test func aPlacementWhoseSyncNeverComesIsLetGo() {
        let placements = PlacementsAwaitingSync()
        let now = ContinuousClock.now
        placements.add(["a.jpg"], from: Self.nas, now: now)
        #expect(placements.paths(now: now.advanced(by: PlacementsAwaitingSync.limit - .seconds(1))) == ["a.jpg"])
        #expect(placements.paths(now: now.advanced(by: PlacementsAwaitingSync.limit)).isEmpty)
    }
}
