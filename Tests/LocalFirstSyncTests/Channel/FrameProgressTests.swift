import Testing
@testable import LocalFirstSync
@testable import LFSyncWire

/// A frame that has begun must keep coming (PROTOCOL.md, "Limits and deadlines").
@Suite struct FrameProgressTests {
    @Test func aByteEveryFewSecondsIsCutOffAfterTheGrace() {
        var progress = FrameProgress(minimumRate: 1024, grace: .seconds(30))
        var cut: Duration?
        var waited: Duration = .zero
        for _ in 0..<20 {
            waited += .seconds(5)
            do { try progress.waited(.seconds(5), received: 1) } catch {
                cut = waited
                break
            }
        }
        #expect(cut == .seconds(35), "cut once the 30 s grace was over")
    }

    @Test func aSlowButSteadyFrameIsNot() throws {
        var progress = FrameProgress(minimumRate: 1024, grace: .seconds(30))
        for _ in 0..<120 { try progress.waited(.seconds(1), received: 2048) }
    }

    @Test func silenceInsideAFrameEndsIt() {
        var progress = FrameProgress(minimumRate: 1024, grace: .seconds(30))
        #expect(throws: SecureChannelError.self) { try progress.waited(.seconds(60), received: 0) }
    }

    @Test func eachFrameStartsAfresh() throws {
        var progress = FrameProgress(minimumRate: 1024, grace: .seconds(30))
        try progress.waited(.seconds(29), received: 10)
        progress.reset()
        try progress.waited(.seconds(29), received: 10)
        #expect(throws: SecureChannelError.self) { try progress.waited(.seconds(2), received: 10) }
    }
}
