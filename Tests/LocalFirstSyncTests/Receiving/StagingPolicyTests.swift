import Testing
@testable import LFSyncStore
@testable import LFSyncLanding

/// The staging limits PROTOCOL.md documents (Receiver rules): partials no transfer holds may
/// take max(1 GiB, 10 % of the file system); a plan leaves min(1 GiB, 1 %) free; 24 h idle.
@Suite struct StagingPolicyTests {
    static let gibibyte: UInt64 = 1 << 30
    static let tebibyte: UInt64 = 1 << 40
    static let limits: [(fileSystem: UInt64, limit: UInt64)] = [
        (2 * gibibyte, gibibyte), (10 * gibibyte, gibibyte), (100 * gibibyte, 10 * gibibyte), (4 * tebibyte, 4 * tebibyte / 10),
    ]

    @Test func unheldPartialsMayTakeTheLargerOf1GiBAndATenth() {
        for (fileSystem, limit) in Self.limits {
            #expect(StagingPolicy.unheldPartialLimit(fileSystemBytes: fileSystem) == limit)
        }
    }

    @Test func aPlanLeavesTheSmallerOf1GiBAndAHundredthFree() {
        #expect(StagingPolicy.reserve(fileSystemBytes: 10 * Self.gibibyte) == 10 * Self.gibibyte / 100)
        #expect(StagingPolicy.reserve(fileSystemBytes: Self.tebibyte) == Self.gibibyte)
    }

    @Test func idlePartialsGoAfter24Hours() {
        #expect(StagingPolicy.idleLimitNs == 24 * 3600 * 1_000_000_000)
    }
}
