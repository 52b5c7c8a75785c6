import Foundation
import LocalFirstSync
import LFSyncSystem
import LFSyncCrypto
import LFSyncContent
import LFSyncStore
import LFSyncTransport
import LFSyncTCP
import LFSyncDiscovery

/// Reproducible benchmark corpora from a seed: incompressible "photos" of
/// 1–6 MB and a few 20–60 MB "videos", or many small files for rescans.
enum CorpusWriter {
    struct File {
        var path: String
        var size: UInt64
    }

    static func photoLikeCorpus(at root: URL, totalBytes: UInt64, seed: UInt64) throws -> [File] {
        var sizes = SplitMix64(seed: seed)
        var files: [File] = []
        var planned: UInt64 = 0
        var index = 0
        while planned < totalBytes {
            let isVideo = index % 25 == 24
            let size = isVideo
                ? 20_000_000 + sizes.next() % 40_000_000
                : 1_000_000 + sizes.next() % 5_000_000
            let clipped = min(size, totalBytes - planned)
            let directory = "DCIM/\(100 + index / 200)APPLE"
            let name = isVideo ? "IMG_\(String(format: "%04d", index)).MOV" : "IMG_\(String(format: "%04d", index)).HEIC"
            files.append(File(path: root.appendingPathComponent("\(directory)/\(name)").path, size: clipped))
            planned += clipped
            index += 1
        }
        for (number, file) in files.enumerated() {
            try writeRandom(to: file.path, size: file.size, seed: seed &+ UInt64(number) &* 7919)
        }
        return files
    }

    /// The `make bench` corpus (ARCHITECTURE.md, "Performance targets"): nested camera folders of incompressible "photos"
    /// (1–6 MB), every fourth one a Live Photo with a 2–4 MB "video" of the same
    /// name, every tenth with an .AAE sidecar, and a 20–60 MB "video" every 25th.
    static func libraryCorpus(at root: URL, totalBytes: UInt64, seed: UInt64) throws -> [File] {
        var sizes = SplitMix64(seed: seed)
        var files: [File] = []
        var planned: UInt64 = 0
        var index = 0
        func add(_ relative: String, _ size: UInt64) {
            let clipped = min(size, totalBytes > planned ? totalBytes - planned : 0)
            guard clipped > 0 else { return }
            files.append(File(path: root.appendingPathComponent(relative).path, size: clipped))
            planned += clipped
        }
        while planned < totalBytes {
            let folder = "DCIM/\(100 + index / 150)APPLE"
            let stem = String(format: "IMG_%04d", index)
            if index % 25 == 24 {
                add("\(folder)/\(stem).MOV", 20_000_000 + sizes.next() % 40_000_000)
            } else {
                add("\(folder)/\(stem).HEIC", 1_000_000 + sizes.next() % 5_000_000)
                if index % 4 == 0 { add("\(folder)/\(stem).MOV", 2_000_000 + sizes.next() % 2_000_000) }
                if index % 10 == 0 { add("\(folder)/\(stem).AAE", 600 + sizes.next() % 1000) }
            }
            index += 1
        }
        for (number, file) in files.enumerated() {
            try writeRandom(to: file.path, size: file.size, seed: seed &+ UInt64(number) &* 7919)
        }
        return files
    }

    static func smallFiles(at root: URL, count: Int, seed: UInt64) throws {
        try? FileManager.default.removeItem(at: root)
        var generator = SplitMix64(seed: seed)
        for index in 0..<count {
            let path = root.appendingPathComponent("folder\(index / 100)/file\(index).jpg").path
            try writeRandom(to: path, size: 1024 + generator.next() % 7168, seed: seed &+ UInt64(index))
        }
    }

    /// Skips the write when the file already has the right size (corpora are reused between runs).
    static func writeRandom(to path: String, size: UInt64, seed: UInt64) throws {
        if let attributes = try? FileManager.default.attributesOfItem(atPath: path),
           (attributes[.size] as? NSNumber)?.uint64Value == size { return }
        let url = URL(fileURLWithPath: path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        guard FileManager.default.createFile(atPath: path, contents: nil) else { throw BenchmarkError("cannot create \(path)") }
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        var generator = SplitMix64(seed: seed)
        var remaining = size
        var block = [UInt8](repeating: 0, count: 1 << 20)
        while remaining > 0 {
            let count = Int(min(UInt64(block.count), remaining))
            generator.fill(&block)
            try handle.write(contentsOf: block[0..<count])
            remaining -= UInt64(count)
        }
    }
}
