import Dispatch
import Foundation
import LocalFirstSync
import LFSyncSystem
import LFSyncCrypto
import LFSyncContent
import LFSyncStore
import LFSyncTransport
import LFSyncTCP
import LFSyncDiscovery

struct ContentBenchmark {
    let corpusMiB: Int
    let rescanFiles: Int
    let repetitions: Int
    let workDirectory: URL

    func run() async throws {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let corpus = workDirectory.appendingPathComponent("content-corpus")
        let files = try CorpusWriter.photoLikeCorpus(at: corpus, totalBytes: UInt64(corpusMiB) << 20, seed: 42)
        let totalBytes = files.reduce(UInt64(0)) { $0 + $1.size }
        print("corpus: \(files.count) files, \(totalBytes >> 20) MiB (page cache warmed); \(cores) cores; \(repetitions) repetitions, median")
        _ = try Self.plainHash(files, workers: cores)  // warm the page cache

        let plainOne = try median { try Self.plainHash(files, workers: 1) }
        let plainAll = try median { try Self.plainHash(files, workers: cores) }
        let each = try Blake2bImplementation.allCases.map { implementation in
            (implementation, try median { try Self.plainHash(files, workers: 1, implementation: implementation) })
        }
        let gearOne = try median { try Self.gearScanOnly(files) }
        let chunkOne = try await medianAsync { try await Self.chunkAndHash(corpus, workers: 1) }
        let chunkAll = try await medianAsync { try await Self.chunkAndHash(corpus, workers: cores) }

        func rate(_ seconds: Double) -> Double { Double(totalBytes) / seconds / 1e9 }
        print("")
        print("| measurement | GB/s | ratio to plain BLAKE2b, 1 core |")
        print("|---|---|---|")
        print(String(format: "| plain keyed BLAKE2b-256 (%@, the faster here), 1 core | %.3f | 1.00 |", "\(Blake2bImplementation.fastest)", rate(plainOne)))
        for (implementation, seconds) in each {
            print(String(format: "| plain keyed BLAKE2b-256, %@, 1 core | %.3f | %.2f |", "\(implementation)", rate(seconds), plainOne / seconds))
        }
        print(String(format: "| plain keyed BLAKE2b-256, %d cores | %.3f | %.2f |", cores, rate(plainAll), plainOne / plainAll))
        print(String(format: "| FastCDC boundary scan alone, 1 core (profile aid) | %.3f | %.2f |", rate(gearOne), plainOne / gearOne))
        print(String(format: "| lfsync chunk+hash (FastCDC + chunk hashes), 1 core | %.3f | %.2f |", rate(chunkOne), plainOne / chunkOne))
        print(String(format: "| lfsync chunk+hash, %d cores (as `lfsync scan` runs) | %.3f | **%.2f** |", cores, rate(chunkAll), plainOne / chunkAll))

        let library = workDirectory.appendingPathComponent("rescan-library")
        try CorpusWriter.smallFiles(at: library, count: rescanFiles, seed: 7)
        // The scan cache trusts a file's stamp only once the file has been left alone for 3 s
        // (a write in the same clock tick would be invisible): let the new files settle, as a
        // library does between a day's photos and the night's push.
        try await Task.sleep(for: .seconds(3.5))
        let indexURL = workDirectory.appendingPathComponent("rescan-index.sqlite")
        try? FileManager.default.removeItem(at: indexURL)
        let index = try LibraryIndex.open(at: indexURL)
        let scanner = LibraryScanner(root: library, cache: index.scanCache, chunkIndex: index.chunkIndex)
        let first = try await scanner.scan()
        var rescans: [Double] = []
        for _ in 0..<max(3, repetitions) {
            let again = try await scanner.scan()
            guard again.statistics.filesFromCache == rescanFiles, again.statistics.filesHashed == 0 else {
                throw BenchmarkError("rescan read file content: \(again.statistics)")
            }
            rescans.append(again.statistics.seconds)
        }
        rescans.sort()
        print("")
        print(String(format: "| rescan of %d unchanged files | first scan %.2f s | rescan (median) %.3f s | target ≤ 1 s |",
                     rescanFiles, first.statistics.seconds, rescans[rescans.count / 2]))
    }

    private func median(_ body: () throws -> Double) throws -> Double {
        var samples = try (0..<repetitions).map { _ in try body() }
        samples.sort()
        return samples[samples.count / 2]
    }

    private func medianAsync(_ body: () async throws -> Double) async throws -> Double {
        var samples: [Double] = []
        for _ in 0..<repetitions { samples.append(try await body()) }
        samples.sort()
        return samples[samples.count / 2]
    }

    /// Reads every file through the same 1 MiB buffer size lfsync uses and hashes it under the
    /// chunk key: the primitive's ceiling.
    static func plainHash(_ files: [CorpusWriter.File], workers: Int, implementation: Blake2bImplementation = .fastest) throws -> Double {
        let started = DispatchTime.now()
        let next = IndexCounter()
        DispatchQueue.concurrentPerform(iterations: workers) { _ in
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 64)
            defer { buffer.deallocate() }
            while let index = next.take(below: files.count) {
                guard let file = try? ReadOnlyFile(path: files[index].path) else { continue }
                var hasher = KeyedBlake2b(key: ContentHash.chunkKey, implementation: implementation)
                while let count = try? file.read(into: buffer), count > 0 {
                    hasher.update(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
                }
                _ = hasher.finalizeAndReset()
            }
        }
        return Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
    }

    /// Only the chunker's boundary scan over the same reads: where chunking time goes.
    static func gearScanOnly(_ files: [CorpusWriter.File]) throws -> Double {
        let started = DispatchTime.now()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 64)
        defer { buffer.deallocate() }
        var cuts = 0
        for file in files {
            let handle = try ReadOnlyFile(path: file.path)
            var chunker = FastCDC()
            while case let count = try handle.read(into: buffer), count > 0 {
                chunker.scan(UnsafeRawBufferPointer(rebasing: buffer[0..<count])) { _ in cuts += 1 }
            }
        }
        guard cuts > 0 else { throw BenchmarkError("no cuts") }
        return Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
    }

    static func chunkAndHash(_ corpus: URL, workers: Int) async throws -> Double {
        let started = DispatchTime.now()
        let scan = try await LibraryScanner(root: corpus, workerCount: workers).scan()
        guard scan.statistics.filesHashed > 0 else { throw BenchmarkError("nothing hashed") }
        return Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
    }
}

struct BenchmarkError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Hands out indices 0..<n once each, across threads.
final class IndexCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0

    func take(below limit: Int) -> Int? {
        lock.lock()
        defer { lock.unlock() }
        guard value < limit else { return nil }
        value += 1
        return value - 1
    }
}
