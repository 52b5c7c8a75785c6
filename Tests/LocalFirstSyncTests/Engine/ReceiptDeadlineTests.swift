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
        var deadline = ReceiptDeadline()
        deadline.passed(.seconds(119))
        #expect(!deadline.hasExpired(owedBytes: 0))
        deadline.passed(.seconds(2))
        #expect(deadline.hasExpired(owedBytes: 0))
        #expect(!deadline.hasExpired(owedBytes: 100 << 20), "100 MiB unconfirmed excuse 100 s more")
        deadline.heard()
        deadline.passed(.seconds(100))
        #expect(!deadline.hasExpired(owedBytes: 0))
        deadline.passed(.seconds(21))
        #expect(deadline.hasExpired(owedBytes: 0))
    }
}
