import Foundation
import Glibc
import Testing
@testable import LFSyncSystem

/// Times beyond ±292 years of 1970 (broken cameras, extracted archives, a peer
/// that set one) saturate instead of trapping, and every time lfsync can hold
/// goes to a `timespec` and back exactly.
@Suite struct FileTimeTests {
    /// tmpfs keeps 64-bit seconds, as the reproduction needed; ext4 clamps them.
    static let tmpfs: URL? = {
        let mounts = (try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8)) ?? ""
        let isTmpfs = mounts.split(separator: "\n").contains { line in
            let fields = line.split(separator: " ")
            return fields.count > 2 && fields[1] == "/dev/shm" && fields[2] == "tmpfs"
        }
        guard isTmpfs, access("/dev/shm", W_OK) == 0 else { return nil }
        return URL(fileURLWithPath: "/dev/shm")
    }()

    static func setModificationTime(_ path: String, seconds: Int, nanoseconds: Int = 0) -> Bool {
        var times = (timespec(tv_sec: 0, tv_nsec: (1 << 30) - 2), timespec(tv_sec: seconds, tv_nsec: nanoseconds))
        return withUnsafePointer(to: &times) { pair in
            pair.withMemoryRebound(to: timespec.self, capacity: 2) { utimensat(AT_FDCWD, path, $0, 0) == 0 }
        }
    }

    @Test func timesBeyondInt64Saturate() {
        #expect(FileTime.nanoseconds(seconds: 9_223_373_036, nanoseconds: 0) == .max)
        #expect(FileTime.nanoseconds(seconds: .max, nanoseconds: 999_999_999) == .max)
        #expect(FileTime.nanoseconds(seconds: -9_223_373_036, nanoseconds: 0) == .min)
        #expect(FileTime.nanoseconds(seconds: .min, nanoseconds: 0) == .min)
        #expect(FileTime.nanoseconds(seconds: 9_223_372_036, nanoseconds: 854_775_808) == .max)
        // The edges themselves are exact, though the product alone would overflow at the low one.
        #expect(FileTime.nanoseconds(seconds: 9_223_372_036, nanoseconds: 854_775_807) == .max)
        #expect(FileTime.nanoseconds(seconds: -9_223_372_037, nanoseconds: 145_224_192) == .min)
        #expect(FileTime.nanoseconds(seconds: -9_223_372_037, nanoseconds: 145_224_191) == .min)
        #expect(FileTime.nanoseconds(seconds: -1, nanoseconds: 999_999_999) == -1)
        #expect(FileTime.nanoseconds(seconds: 1_700_000_000, nanoseconds: 5) == 1_700_000_000_000_000_005)
    }

    @Test func everyHeldTimeRoundTripsThroughATimespec() {
        var generator = SplitMix64(seed: 77)
        let samples: [Int64] = [.min, .min + 1, -1_000_000_001, -1_000_000_000, -999_999_999, -1, 0, 1, 999_999_999, .max - 1, .max]
            + (0..<1000).map { _ in Int64(bitPattern: generator.next()) }
        for sample in samples {
            let time = FileTime.timespec(sample)
            #expect((0..<1_000_000_000).contains(time.tv_nsec))
            #expect(FileTime.nanoseconds(time) == sample, "\(sample)")
        }
    }

    /// The reproduction: a file whose mtime is 9223373036 s (and one as far before
    /// 1970) used to trap in `FileStatus`; now its status reads, saturated.
    @Test(.enabled(if: tmpfs != nil, "needs a writable tmpfs at /dev/shm, which keeps 64-bit seconds"))
    func aFileWithAnAbsurdTimeHasAStatus() throws {
        let directory = try #require(Self.tmpfs).appendingPathComponent("lfsync-filetime-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let late = directory.appendingPathComponent("late").path, early = directory.appendingPathComponent("early").path
        for path in [late, early] { try Data("x".utf8).write(to: URL(fileURLWithPath: path)) }
        try #require(Self.setModificationTime(late, seconds: 9_223_373_036))
        try #require(Self.setModificationTime(early, seconds: -9_223_373_036))
        #expect(try FileStatus.of(path: late).modificationTimeNs == .max)
        #expect(try FileStatus.of(path: early).modificationTimeNs == .min)
        // The lowest time a peer can send lands before Int64.min's second and reads back exactly.
        try #require(Self.setModificationTime(early, seconds: FileTime.timespec(.min).tv_sec, nanoseconds: FileTime.timespec(.min).tv_nsec))
        #expect(try FileStatus.of(path: early).modificationTimeNs == .min)
    }
}
