import Testing
@testable import LocalFirstSync

/// How long a sender waits for the next Receipt (PROTOCOL.md, "Limits and deadlines").
@Suite struct ReceiptDeadlineTests {
    @Test func theAllowedSilenceGrowsWithTheBytesStillUnconfirmed() {
        #expect(ReceiptDeadline.silence(owedBytes: 0) == .seconds(120))
        #expect(ReceiptDeadline.silence(owedBytes: 600 << 20) == .seconds(720))
        #expect(ReceiptDeadline.silence(owedBytes: .max) > .seconds(120))
    }

    @Test func expiresOnlyAfterThatSilenceAndEachReceiptRestartsIt() {
        let start = ContinuousClock.now
        var deadline = ReceiptDeadline(startingAt: start)
        #expect(!deadline.hasExpired(owedBytes: 0, at: start + .seconds(119)))
        #expect(deadline.hasExpired(owedBytes: 0, at: start + .seconds(121)))
        #expect(!deadline.hasExpired(owedBytes: 100 << 20, at: start + .seconds(121)))
        deadline.heard(at: start + .seconds(100))
        #expect(!deadline.hasExpired(owedBytes: 0, at: start + .seconds(200)))
        #expect(deadline.hasExpired(owedBytes: 0, at: start + .seconds(221)))
    }
}
