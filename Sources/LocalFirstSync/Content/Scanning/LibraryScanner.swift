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

    /// Memory stays proportional to what the scan returns, never to a copy of
    /// the cache: the cache is streamed in path order and merged with the
    /// sorted walk, and files are grouped one directory at a time.
    public func scan(progress: @escaping @Sendable (ScanProgress) -> Void = { _ in }) async throws(Failure) -> LibraryScan {
        let started = ContinuousClock.now
        progress(ScanProgress(phase: .walking, filesTotal: 0, filesDone: 0, bytesToHash: 0, bytesHashed: 0))
        let walked: (files: [DirectoryWalker.Entry], skipped: [SkippedEntry])
        do { walked = try DirectoryWalker(rootPath: rootPath).walk() } catch { throw .cannotOpenLibrary(error) }
        var skipped = walked.skipped
        let entries = walked.files
        // The walk in path byte order, the order the cache streams its rows in.
        let byPath = entries.indices.sorted { entries[$0].relativePath < entries[$1].relativePath }

        // One slot per walked file, filled from the cache and by the hashing workers.
        let files = ScanSlots(count: entries.count)
        var isSettled = [Bool](repeating: false, count: entries.count)
        var filesFromCache = 0
        if let cache {
            var cursor = 0
            do {
                try cache.forEachEntry { hit in
                    while cursor < byPath.count, entries[byPath[cursor]].relativePath < hit.path { cursor += 1 }
                    guard cursor < byPath.count else { return }
                    let entry = entries[byPath[cursor]]
                    guard entry.relativePath == hit.path, hit.isUnchanged(entry.status) else { return }
                    var known = hit
                    known.manifest.path = entry.relativePath  // one string for both
                    files[byPath[cursor]] = known
                    filesFromCache += 1
                    // A received file's chunk list is the sender's word: this device checks each
                    // chunk against it when it sends the file on, instead of trusting its status.
                    isSettled[byPath[cursor]] = hit.chunkListVerified
                }
            } catch {
                throw .cache(error)
            }
        }

        let misses = entries.indices.filter { files[$0] == nil }
        let failures = await hash(misses, of: entries, into: files, alreadyDone: filesFromCache, progress: progress)
        var freshCount = 0
        var bytesHashed: UInt64 = 0
        for index in misses {
            guard let file = files[index] else { continue }
            freshCount += 1
            isSettled[index] = file.isUnchanged(entries[index].status)
            bytesHashed += file.manifest.size
        }
        skipped += failures

        do {
            let sortedPaths = byPath.map { entries[$0].relativePath }
            let fresh = misses.lazy.compactMap { files[$0] }
            if let cache {
                try cache.storeAll(fresh)
                try cache.removeEntries(cache.paths(notIn: sortedPaths))
            }
            if let chunkIndex {
                try chunkIndex.recordAll(fresh)
                try chunkIndex.removeFiles(notInSorted: sortedPaths)
            }
        } catch {
            throw .cache(error)
        }

        var settled = SettledFiles()
        for index in byPath where isSettled[index] { settled.append(entries[index].relativePath, entries[index].status) }
        var statistics = LibraryScan.Statistics()
        for index in entries.indices { if let file = files[index] { statistics.files += 1; statistics.bytes += file.manifest.size } }
        progress(ScanProgress(phase: .grouping, filesTotal: statistics.files, filesDone: statistics.files, bytesToHash: bytesHashed, bytesHashed: bytesHashed))
        let assets = Self.assets(from: files, count: entries.count)
        skipped.sort { $0.path < $1.path }
        statistics.filesFromCache = filesFromCache
        statistics.filesHashed = freshCount
        statistics.bytesHashed = bytesHashed
        let elapsed = ContinuousClock.now - started
        statistics.seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        progress(ScanProgress(phase: .finished, filesTotal: statistics.files, filesDone: statistics.files, bytesToHash: bytesHashed, bytesHashed: bytesHashed))
        return LibraryScan(assets: assets, skipped: skipped, statistics: statistics, settledStatus: settled)
    }

    /// Hashes the files at `misses` (indices into `entries`) on every core and
    /// puts their manifests into `files`; returns those that could not be read.
    private func hash(
        _ misses: [Int], of entries: [DirectoryWalker.Entry], into files: ScanSlots, alreadyDone: Int,
        progress: @escaping @Sendable (ScanProgress) -> Void
    ) async -> [SkippedEntry] {
        guard !misses.isEmpty else { return [] }
        // Largest first, so the last file to finish is a small one and both cores stay busy to the end.
        let order = misses.sorted { entries[$0].status.size > entries[$1].status.size }
        let bytesToHash = misses.reduce(UInt64(0)) { $0 + entries[$1].status.size }
        let counters = ProgressCounters()
        let digester = FileDigester(configuration: configuration)
        let root = rootPath
        let total = entries.count
        progress(ScanProgress(phase: .hashing, filesTotal: total, filesDone: alreadyDone, bytesToHash: bytesToHash, bytesHashed: 0))
        // The workers write straight into the scan's own slots (each index by one worker):
        // no array of results beside them, for 200,000 files that is tens of megabytes.
        let failures = Mutex<[SkippedEntry]>([])
        await ParallelWork.forEach(
            count: order.count, workerCount: workerCount,
            makeScratch: { [configuration] in DigestScratch(configuration: configuration) },
            releaseScratch: { _ in },
            body: { position, scratch in
                let index = order[position]
                let entry = entries[index]
                let absolute = root + "/" + entry.relativePath.string
                do throws(FileDigester.Failure) {
                    let startedNs = Self.wallClockNs()
                    let (manifest, status) = try digester.manifest(
                        absolutePath: absolute, relativePath: entry.relativePath.string, expected: entry.status,
                        buffer: scratch.buffer, hasher: &scratch.hasher)
                    let identifier = AppleContentIdentifierReader.contentIdentifier(ofFileAtPath: absolute)
                    // File times come from a coarse clock: a write just after we read, within the same
                    // tick, would leave the ctime as it was. Only a file left alone for a while before
                    // we read it can be recognised later by its ctime; any other is hashed again.
                    let settled = status.changeTimeNs < startedNs - Self.settlingTimeNs
                    files[index] = ScannedFile(manifest: manifest, inode: status.inode, contentIdentifier: identifier,
                                               changeTimeNs: settled ? status.changeTimeNs : nil)
                } catch {
                    failures.withLock { $0.append(SkippedEntry(path: entry.relativePath, reason: error.description)) }
                }
                let (done, bytes) = counters.add(bytes: entry.status.size)
                progress(ScanProgress(phase: .hashing, filesTotal: total, filesDone: alreadyDone + done, bytesToHash: bytesToHash, bytesHashed: bytes))
            })
        return failures.withLock { $0 }
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

    /// Groups files into assets one directory at a time (the walk lists each
    /// directory's files together, and no asset spans directories), so the
    /// grouper's working set is one directory's, not the library's.
    /// Empties `scanned` as it goes: each file's record is released once its asset holds it.
    private static func assets(from scanned: ScanSlots, count: Int) -> [Asset] {
        var assets: [Asset] = []
        var start = 0
        while start < count {
            guard let first = scanned[start] else {
                start += 1
                continue
            }
            let directory = first.path.directory
            var end = start + 1
            while end < count, scanned[end].map({ $0.path.directory == directory }) ?? true { end += 1 }
            let run = (start..<end).compactMap { scanned.take(at: $0) }
            var manifests: [RelativePath: FileManifest] = [:]
            for file in run { manifests[file.manifest.path] = file.manifest }
            for group in AssetGrouper.group(run.map { GroupingCandidate(path: $0.manifest.path, contentIdentifier: $0.contentIdentifier) }) {
                let members = group.members.compactMap { member in manifests[member.path].map { Asset.File(role: member.role, manifest: $0) } }
                if !members.isEmpty { assets.append(Asset(files: members)) }
            }
            start = end
        }
        return assets.sorted { $0.primaryPath < $1.primaryPath }
    }
}

/// One slot per walked file: filled by the cache merge, then by the hashing
/// workers — each slot by exactly one of them, never two at once, so the
/// buffer needs no lock — and emptied by the grouping. Raw memory rather than
/// an array because an array cannot be written by several threads at once.
private final class ScanSlots: @unchecked Sendable {
    private let slots: UnsafeMutableBufferPointer<IndexedFile?>

    init(count: Int) {
        slots = .allocate(capacity: count)
        slots.initialize(repeating: nil)
    }

    deinit {
        slots.deinitialize()
        slots.deallocate()
    }

    subscript(index: Int) -> IndexedFile? {
        get { slots[index] }
        set { slots[index] = newValue }
    }

    /// The slot's file, leaving it empty.
    func take(at index: Int) -> IndexedFile? {
        defer { slots[index] = nil }
        return slots[index]
    }
}

/// What one hashing worker reuses from file to file: its read buffer and its
/// hasher (whose libsodium states are aligned allocations, see
/// `ChunkingHasher.finishAndReset`). Used by one thread at a time.
private final class DigestScratch: @unchecked Sendable {
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: FileDigester.defaultBufferSize, alignment: 64)
    var hasher: ChunkingHasher

    init(configuration: ChunkerConfiguration) {
        hasher = ChunkingHasher(configuration: configuration)
    }

    deinit {
        buffer.deallocate()
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
