import Testing
import LFSyncTransport

/// `--bwlimit` values as rsync 3.5 reads them (its `parse_size_arg`).
@Suite struct TransferRateTests {
    /// Typed once, so the compiler need not infer a long literal.
    static let parsed: [(String, UInt64)] = [
        ("100", 100 * 1024),  // no unit: KiB/s
        ("1.5M", 1_572_864), ("1.5m", 1_572_864),
        ("800K", 819_200), ("1KiB", 1024), ("1kib", 1024), ("1MiB", 1 << 20), ("2G", 2 << 30), ("1T", 1 << 40), ("1P", 1 << 50),
        ("1KB", 1000), ("10MB", 10_000_000), ("1gb", 1_000_000_000), ("1PB", 1_000_000_000_000_000),
        ("512B", 512), ("512b", 512), ("600BB", 600),
        (".5", 512), ("2.", 2048), ("0.001M", 1048), ("1.0005K", 1024),  // fractions truncate to whole bytes
        ("1M-1", 1_048_575), ("1M+1", 1_048_577), ("100+1", 102_401),
        ("8191P", 8191 << 50),
    ]

    @Test(arguments: parsed)
    func parses(text: String, bytesPerSecond: UInt64) throws {
        let rate = try #require(try TransferRate.parse(text))
        #expect(rate.bytesPerSecond == bytesPerSecond)
    }

    @Test(arguments: ["0", "0.0", "0K", "0MB", "00"])
    func zeroMeansNoLimit(text: String) throws {
        #expect(try TransferRate.parse(text) == nil)
    }

    /// rsync refuses all of these too, except "", "K" and "0.0001", which it silently reads
    /// as "no limit": here they are typos to report.
    @Test(arguments: [
        "", "K", "0.0001", ".", "-1", "-0", "abc", "1x", "1 K", " 1", "1K ", "1e3", "0x10", "1KiBB", "1Ki", "+5",
        "1.2.3", "1,5M", "1M+2", "0-1", "0+1", "511B", "0.1",
        "8192P", "9223372036854775808B", "99999999999999999999999",
    ])
    func rejects(text: String) {
        #expect(throws: TransferRate.Failure.self) { try TransferRate.parse(text) }
    }

    @Test func explainsWhy() {
        #expect(throws: TransferRate.Failure.invalid("100B", reason: "below the minimum of 512 bytes/s; use 0 for no limit")) {
            try TransferRate.parse("100B")
        }
        #expect(throws: TransferRate.Failure.invalid("-5M", reason: "a rate cannot be negative")) {
            try TransferRate.parse("-5M")
        }
        #expect("\(TransferRate.Failure.invalid("x", reason: "bad"))" == "invalid rate \"x\": bad")
    }

    static let described: [(UInt64, String)] = [
        (512, "512 B/s"), (1023, "1023 B/s"), (1024, "1 KiB/s"), (1536, "1.5 KiB/s"), (1034, "1.01 KiB/s"),
        (102_400, "100 KiB/s"), (1_000_000, "976.56 KiB/s"), (1_048_575, "1 MiB/s"), (1_572_864, "1.5 MiB/s"),
        (1_000_000_000, "953.67 MiB/s"), (UInt64(Int64.max), "8 EiB/s"),
    ]

    @Test(arguments: described)
    func describesInBinaryUnits(bytesPerSecond: UInt64, text: String) {
        #expect(TransferRate(bytesPerSecond: bytesPerSecond).description == text)
    }

    @Test func theDescriptionOfAParsedRateReadsBackAsIt() throws {
        let rate = try #require(try TransferRate.parse("2.5M"))
        #expect(rate.description == "2.5 MiB/s")
        #expect(try TransferRate.parse("2.5MiB") == rate)
    }
}
