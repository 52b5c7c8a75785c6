import Foundation
import Synchronization

/// Turns a library folder into assets.
///
/// Walks the folder (never leaving it), takes every unchanged file's manifest
/// and Live Photo identifier from the scan cache, hashes the rest on all
/// cores, then groups files into assets. An unchanged library is rescanned
/// from `lstat` data and the cache alone: no file content is read.
public struct LibraryScanner: Sendable {
    public let rootPath: String
    public var configuration: ChunkerConfiguration
    public var workerCount: Int
    /// Optional: without one every file is hashed every time.
    public var cache: ScanCache?
    /// Optional: fed with the chunks of every newly hashed file.
    public var chunkIndex: ChunkIndex?

    public init(
        root: URL, cache: ScanCache? = nil, chunkIndex: ChunkIndex? = nil,
        configuration: ChunkerConfiguration = .default,
        workerCount: Int = ProcessInfo.processInfo.activeProcessorCount
    ) {
        rootPath = root.standardizedFileURL.path
        self.cache = cache
        self.chunkIndex = chunkIndex
        self.configuration = configuration
        self.workerCount = workerCount
    }

    public enum Failure: Error, Sendable, CustomStringConvertible {
        case cannotOpenLibrary(SystemError)
        case cache(any Error)

        public var description: String {
            switch self {
            case let .cannotOpenLibrary(error): "cannot read library: \(error)"
            case let .cache(error): "scan cache: \(error)"
            }
        }
    }

    private typealias ScannedFile = IndexedFile

    public func scan(progress: @escaping @Sendable (ScanProgress) -> Void = { _ in }) async throws(Failure) -> LibraryScan {
        let started = ContinuousClock.now
        progress(ScanProgress(phase: .walking, filesTotal: 0, filesDone: 0, bytesToHash: 0, bytesHashed: 0))
        let walked: (files: [DirectoryWalker.Entry], skipped: [SkippedEntry])
        do { walked = try DirectoryWalker(rootPath: rootPath).walk() } catch { throw .cannotOpenLibrary(error) }
        var skipped = walked.skipped

        let cached: [RelativePath: IndexedFile]
        do { cached = try cache?.loadAll() ?? [:] } catch { throw .cache(error) }

        var known: [ScannedFile] = []
        var misses: [DirectoryWalker.Entry] = []
        var settled: [RelativePath: FileStatus] = [:]
        for entry in walked.files {
            if let hit = cached[entry.relativePath], hit.isUnchanged(entry.status) {
                known.append(hit)
                // A received file's chunk list is the sender's word: this device checks each
                // chunk against it when it sends the file on, instead of trusting its status.
                if hit.chunkListVerified { settled[entry.relativePath] = entry.status }
            } else {
                misses.append(entry)
            }
        }

        let hashed = await hash(misses, alreadyDone: known.count, total: walked.files.count, progress: progress)
        var fresh: [ScannedFile] = []
        var bytesHashed: UInt64 = 0
        for (entry, outcome) in zip(misses, hashed) {
            switch outcome {
            case let .success(file):
                fresh.append(file)
                if file.isUnchanged(entry.status) { settled[entry.relativePath] = entry.status }
                bytesHashed += file.manifest.size
            case let .failure(error):
                skipped.append(SkippedEntry(path: entry.relativePath, reason: error.description))
            }
        }

        do {
            if let cache {
                try cache.storeAll(fresh)
                try cache.removeEntries(notIn: Set(walked.files.map(\.relativePath)))
            }
            if let chunkIndex {
                try chunkIndex.recordAll(fresh)
                try chunkIndex.removeFiles(notIn: Set(walked.files.map(\.relativePath)))
            }
        } catch {
            throw .cache(error)
        }

        let files = known + fresh
        progress(ScanProgress(phase: .grouping, filesTotal: files.count, filesDone: files.count, bytesToHash: bytesHashed, bytesHashed: bytesHashed))
        let assets = Self.assets(from: files)
        skipped.sort { $0.path < $1.path }
        var statistics = LibraryScan.Statistics()
        statistics.files = files.count
        statistics.bytes = files.reduce(0) { $0 + $1.manifest.size }
        statistics.filesFromCache = known.count
        statistics.filesHashed = fresh.count
        statistics.bytesHashed = bytesHashed
        let elapsed = ContinuousClock.now - started
        statistics.seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        progress(ScanProgress(phase: .finished, filesTotal: files.count, filesDone: files.count, bytesToHash: bytesHashed, bytesHashed: bytesHashed))
        return LibraryScan(assets: assets, skipped: skipped, statistics: statistics, settledStatus: settled)
    }

    private func hash(
        _ entries: [DirectoryWalker.Entry], alreadyDone: Int, total: Int,
        progress: @escaping @Sendable (ScanProgress) -> Void
    ) async -> [Result<ScannedFile, FileDigester.Failure>] {
        // Largest first, so the last file to finish is a small one and both cores stay busy to the end.
        let order = entries.indices.sorted { entries[$0].status.size > entries[$1].status.size }
        let bytesToHash = entries.reduce(UInt64(0)) { $0 + $1.status.size }
        let counters = ProgressCounters()
        let digester = FileDigester(configuration: configuration)
        let root = rootPath
        progress(ScanProgress(phase: .hashing, filesTotal: total, filesDone: alreadyDone, bytesToHash: bytesToHash, bytesHashed: 0))
        let results = await ParallelWork.map(
            count: order.count, workerCount: workerCount,
            makeScratch: { UnsafeMutableRawBufferPointer.allocate(byteCount: FileDigester.defaultBufferSize, alignment: 64) },
            releaseScratch: { $0.deallocate() },
            body: { position, buffer -> Result<ScannedFile, FileDigester.Failure> in
                let entry = entries[order[position]]
                let absolute = root + "/" + entry.relativePath.string
                let outcome = Result { () throws(FileDigester.Failure) in
                    let startedNs = Self.wallClockNs()
                    let (manifest, status) = try digester.manifest(
                        absolutePath: absolute, relativePath: entry.relativePath.string, expected: entry.status, buffer: buffer)
                    let identifier = AppleContentIdentifierReader.contentIdentifier(ofFileAtPath: absolute)
                    // File times come from a coarse clock: a write just after we read, within the same
                    // tick, would leave the ctime as it was. Only a file left alone for a while before
                    // we read it can be recognised later by its ctime; any other is hashed again.
                    let settled = status.changeTimeNs < startedNs - Self.settlingTimeNs
                    return ScannedFile(manifest: manifest, inode: status.inode, contentIdentifier: identifier,
                                       changeTimeNs: settled ? status.changeTimeNs : nil)
                }
                let (files, bytes) = counters.add(bytes: entry.status.size)
                progress(ScanProgress(phase: .hashing, filesTotal: total, filesDone: alreadyDone + files, bytesToHash: bytesToHash, bytesHashed: bytes))
                return outcome
            })
        // Back to the walk's order.
        var unordered = [Result<ScannedFile, FileDigester.Failure>?](repeating: nil, count: entries.count)
        for (position, index) in order.enumerated() { unordered[index] = results[position] }
        return unordered.compactMap { $0 }
    }

    /// How long a file must have been left alone before its hashing for its
    /// ctime to vouch for it later: far above any kernel timestamp tick, and
    /// above the 2 s granularity of the coarsest file systems.
    static let settlingTimeNs: Int64 = 3_000_000_000

    static func wallClockNs() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }

    private static func assets(from files: [ScannedFile]) -> [Asset] {
        let byPath = Dictionary(files.map { ($0.manifest.path, $0.manifest) }, uniquingKeysWith: { first, _ in first })
        let groups = AssetGrouper.group(files.map { GroupingCandidate(path: $0.manifest.path, contentIdentifier: $0.contentIdentifier) })
        return groups.compactMap { group in
            let members = group.members.compactMap { member in byPath[member.path].map { Asset.File(role: member.role, manifest: $0) } }
            return members.isEmpty ? nil : Asset(files: members)
        }
    }
}

/// Files and bytes finished so far, shared by the hashing workers.
private final class ProgressCounters: Sendable {
    private let state = Mutex<(files: Int, bytes: UInt64)>((0, 0))

    func add(bytes: UInt64) -> (files: Int, bytes: UInt64) {
        state.withLock { value in
            value.files += 1
            value.bytes += bytes
            return value
        }
    }
}
