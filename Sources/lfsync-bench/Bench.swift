import Foundation
import LFSyncFixtures
import LocalFirstSync
import LFSyncSystem
import LFSyncCrypto
import LFSyncContent
import LFSyncStore
import LFSyncTransport
import LFSyncTCP
import LFSyncDiscovery

/// `lfsync-bench content [--size-mib N] [--files N] [--reps N]`
///
/// Measures, in one run and on the same bytes: plain BLAKE2b (the raw
/// primitive, one core and all cores), lfsync's chunk+hash pipeline (one core
/// and all cores), and a rescan of an unchanged library from the scan cache.
@main
struct Bench {
    static func main() async throws {
        MemoryTuning.keepLargeBuffersInHeap()
        var arguments = Array(CommandLine.arguments.dropFirst())
        guard let mode = arguments.first else {
            print("usage: lfsync-bench content [--size-mib N] [--files N] [--reps N] [--work DIR]")
            print("       lfsync-bench channel [--size-mib N] [--reps N]")
            print("       lfsync-bench broadcast [--size-mib N] [--work DIR]")
            print("       lfsync-bench corpus DIR [--size-mib N] [--seed N]")
            print("       lfsync-bench small-files DIR [--count N]")
            print("       lfsync-bench sample-library DIR [--padding BYTES] [--seed N]")
            print("       lfsync-bench real-library DIR [--files N] [--seed N] [--max-bytes N]")
            print("       lfsync-bench hash-vectors")
            exit(64)
        }
        arguments.removeFirst()
        var positional: String?
        if let first = arguments.first, !first.hasPrefix("--") {
            positional = first
            arguments.removeFirst()
        }
        var options: [String: String] = [:]
        while arguments.count >= 2, arguments[0].hasPrefix("--") {
            options[String(arguments[0].dropFirst(2))] = arguments[1]
            arguments.removeFirst(2)
        }
        switch mode {
        case "content":
            try await ContentBenchmark(
                corpusMiB: Int(options["size-mib"] ?? "") ?? 1024,
                rescanFiles: Int(options["files"] ?? "") ?? 10_000,
                repetitions: Int(options["reps"] ?? "") ?? 3,
                workDirectory: URL(fileURLWithPath: options["work"] ?? "bench-out", isDirectory: true)
            ).run()
        case "channel":
            try await ChannelBenchmark(
                totalMiB: Int(options["size-mib"] ?? "") ?? 1024,
                repetitions: Int(options["reps"] ?? "") ?? 3
            ).run()
        case "broadcast":
            try await BroadcastBenchmark(
                corpusMiB: Int(options["size-mib"] ?? "") ?? 300,
                workDirectory: URL(fileURLWithPath: options["work"] ?? "bench-out", isDirectory: true)
            ).run()
        case "corpus":
            guard let directory = positional else {
                print("corpus needs a directory")
                exit(64)
            }
            let files = try CorpusWriter.libraryCorpus(
                at: URL(fileURLWithPath: directory, isDirectory: true),
                totalBytes: UInt64(Int(options["size-mib"] ?? "") ?? 1024) << 20, seed: UInt64(options["seed"] ?? "") ?? 42)
            print("\(files.count) files, \(files.reduce(UInt64(0)) { $0 + $1.size }) bytes in \(directory)")
        case "small-files":
            guard let directory = positional else {
                print("small-files needs a directory")
                exit(64)
            }
            try CorpusWriter.smallFiles(at: URL(fileURLWithPath: directory, isDirectory: true),
                                        count: Int(options["count"] ?? "") ?? 100_000, seed: 7)
        case "sample-library":
            guard let directory = positional else {
                print("sample-library needs a directory")
                exit(64)
            }
            let written = try SampleLibrary.write(
                at: URL(fileURLWithPath: directory, isDirectory: true),
                options: .init(photoPadding: Int(options["padding"] ?? "") ?? 1_500_000, seed: UInt64(options["seed"] ?? "") ?? 2026))
            print("wrote \(written.count) files to \(directory)")
        case "real-library":
            guard let directory = positional else {
                print("real-library needs a directory")
                exit(64)
            }
            let defaults = RealisticLibrary.Options()
            let summary = try RealisticLibrary.write(
                at: URL(fileURLWithPath: directory, isDirectory: true),
                options: .init(fileCount: Int(options["files"] ?? "") ?? defaults.fileCount,
                               seed: UInt64(options["seed"] ?? "") ?? defaults.seed,
                               maxFileBytes: Int(options["max-bytes"] ?? "") ?? defaults.maxFileBytes))
            print("\(summary.files) files, \(summary.bytes) bytes, \(summary.duplicatePaths) duplicate paths, "
                  + "\(summary.emptyFiles) empty files in \(directory)")
        case "hash-vectors":
            FileHandle.standardOutput.write(try HashVectors.json())
            print("")
        default:
            print("unknown benchmark '\(mode)'")
            exit(64)
        }
    }
}
