import Foundation
import Synchronization
import LFSyncSystem

/// Turns a library folder into assets.
///
/// Walks the folder (never leaving it), takes every unchanged file's manifest
/// and Live Photo identifier from the scan cache, hashes the rest on all
/// cores, then groups files into assets. An unchanged library is rescanned
/// from `lstat` data and the cache alone: no file content is read.
public struct LibraryScanner: Sendable {
    public let rootPath: String
    package var configuration: ChunkerConfiguration
    public var workerCount: Int
    /// Optional: without one every file is hashed every time.
    public var cache: (any ScanMemory)?
    /// Optional: fed with the chunks of every newly hashed file.
    public var chunkIndex: (any ScanObserver)?
    /// What the scan leaves out: by default the built-in patterns and the library's `.lfsyncignore`.
    package var exclusions: ScanExclusions

    package init(
        root: URL, cache: (any ScanMemory)? = nil, chunkIndex: (any ScanObserver)? = nil,
        exclusions: ScanExclusions = ScanExclusions(), configuration: ChunkerConfiguration = .default,
        workerCount: Int = ProcessInfo.processInfo.activeProcessorCount
    ) {
        rootPath = root.standardizedFileURL.path
        self.cache = cache
        self.chunkIndex = chunkIndex
        self.exclusions = exclusions
        self.configuration = configuration
        self.workerCount = workerCount
    }

    public enum Failure: Error, Sendable, CustomStringConvertible {
        case cannotOpenLibrary(SystemError)
        case cache(any Error)
        case exclusions(ScanExclusions.Failure)

        public var description: String {
            switch self {
            case let .cannotOpenLibrary(error): "cannot read library: \(error)"
            case let .cache(error): "scan cache: \(error)"
            case let .exclusions(failure): "ignore rules: \(failure)"
            }
        }
    }

    private typealias ScannedFile = IndexedFile

    /// Memory stays proportional to what the scan returns: the cache's rows,
    /// read in path order beside the walk, are merged with the sorted walk and
    /// kept only where they still describe a file, and files are grouped one
    /// directory at a time.
    public func scan(progress: @escaping @Sendable (ScanProgress) -> Void = { _ in }) async throws(Failure) -> LibraryScan {
        let collected = LockedState<(assets: [Asset], settled: SettledFiles)>(([], SettledFiles()))
        var scan = try await run(segmentLimit: nil, progress: progress) { segment in
            collected.withLock { $0 = (segment.assets, segment.settled) }
        }
        collected.withLock { result in
            scan.assets = result.assets.sorted { $0.primaryPath < $1.primaryPath }
            scan.settledStatus = result.settled
        }
        return scan
    }

    /// A streaming scan: hands over the library in segments — runs of whole
    /// directories, hashed and grouped into assets — while the rest is still
    /// being hashed, so a push can offer and send the first folders while the
    /// last are read. `walked` is called once, after the walk and before any
    /// segment, with the files and bytes found. `segment` may suspend: the next
    /// segment is handed over once it returns (hashing goes on meanwhile), which
    /// is how a push keeps its offers from running far ahead of its peers.
    /// - Returns: skipped files and statistics; its `assets` and
    ///   `settledStatus` are empty (they went out with the segments).
    package func scan(
        segmentFiles: Int = 1024, segmentBytes: UInt64 = 64 << 20,
        walked: @escaping @Sendable (_ files: Int, _ bytes: UInt64) -> Void,
        segment: @escaping @Sendable (ScanSegment) async -> Void,
        progress: @escaping @Sendable (ScanProgress) -> Void = { _ in }
    ) async throws(Failure) -> LibraryScan {
        try await run(segmentLimit: (max(1, segmentFiles), max(1, segmentBytes)), walked: walked, progress: progress, deliver: segment)
    }

    /// The scan proper. Files are hashed on every core in walk order; each
    /// segment is grouped and delivered as soon as its last file is hashed, in
    /// order, while the workers go on with the next; its new files reach the
    /// cache in batches of several segments (`CacheWrites`).
    /// Without a `segmentLimit` the whole library is one segment.
    private func run(
        segmentLimit: (files: Int, bytes: UInt64)?, walked: @Sendable (Int, UInt64) -> Void = { _, _ in },
        progress: @escaping @Sendable (ScanProgress) -> Void, deliver: (ScanSegment) async -> Void
    ) async throws(Failure) -> LibraryScan {
        let started = ContinuousClock.now
        progress(ScanProgress(phase: .walking, filesTotal: 0, filesDone: 0, bytesToHash: 0, bytesHashed: 0))
        // The walk, the cache's rows and its commits wait for the disk: on a thread of their
        // own, not on the cooperative pool (a walk of 200,000 files takes seconds). The walk
        // and the cache's rows go in one hop: the rows are matched against the walk while it
        // is still in that thread's caches.
        let disk = BlockingQueue(label: "lfsync.scan")
        let rootPath = rootPath, cache = cache, chunkIndex = chunkIndex
        let ignore: IgnoreRules
        do { ignore = try exclusions.effectiveRules(forLibraryAt: rootPath) } catch { throw .exclusions(error) }
        let found = try await disk.run { () throws(Failure) -> Walked in
            try Self.walk(rootPath, ignoring: ignore, rememberedBy: cache)
        }
        var skipped = found.skipped
        let entries = found.entries, byPath = found.byPath, files = found.files
        var isSettled = found.isSettled
        let filesFromCache = found.filesFromCache
        walked(entries.count, entries.reduce(0) { $0 + $1.status.size })

        let segments = Self.segments(of: entries, limit: segmentLimit, isKnown: { files[$0] != nil })
        let hashing = HashingRun(segments: segments, entries: entries, alreadyDone: filesFromCache)
        let (completed, completions) = AsyncStream<Int>.makeStream()
        // A child of this scan: cancelled with it, and awaited before it returns or throws.
        async let skippedWhileHashing = hash(hashing, into: files, completions: completions, progress: progress)
        var statistics = LibraryScan.Statistics()
        var cacheWrites = CacheWrites(disk: disk, cache: cache, chunkIndex: chunkIndex)
        var next = 0
        var done = Set<Int>()
        for await index in completed {
            done.insert(index)
            while done.remove(next) != nil {
                let segment = segments[next]
                next += 1
                var fresh: [IndexedFile] = []
                for index in segment.misses {
                    guard let file = files[index] else { continue }
                    fresh.append(file)
                    statistics.filesHashed += 1
                    statistics.bytesHashed += file.manifest.size
                    isSettled[index] = file.isUnchanged(entries[index].status)
                }
                try await cacheWrites.add(fresh)
                var settled: [(RelativePath, FileStatus)] = []
                for index in segment.range {
                    guard let file = files[index] else { continue }
                    statistics.files += 1
                    statistics.bytes += file.manifest.size
                    if isSettled[index] { settled.append((entries[index].relativePath, entries[index].status)) }
                }
                settled.sort { $0.0 < $1.0 }
                var settledFiles = SettledFiles()
                for (path, status) in settled { settledFiles.append(path, status) }
                let library = URL(fileURLWithPath: rootPath, isDirectory: true)
                await deliver(ScanSegment(assets: Self.assets(from: files, in: segment.range).map { $0.found(in: library) }, settled: settledFiles))
            }
        }
        skipped += await skippedWhileHashing
        try await cacheWrites.finish()

        let sortedPaths = byPath.map { entries[$0].relativePath }
        try await Self.cacheWork(on: disk) {
            try cache?.forgetFiles(notInSorted: sortedPaths)
            try chunkIndex?.didFinishScan(found: sortedPaths)
        }
        progress(ScanProgress(phase: .grouping, filesTotal: statistics.files, filesDone: statistics.files,
                              bytesToHash: statistics.bytesHashed, bytesHashed: statistics.bytesHashed))
        skipped.sort { $0.path < $1.path }
        statistics.filesFromCache = filesFromCache
        let elapsed = ContinuousClock.now - started
        statistics.seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        progress(ScanProgress(phase: .finished, filesTotal: statistics.files, filesDone: statistics.files,
                              bytesToHash: statistics.bytesHashed, bytesHashed: statistics.bytesHashed))
        return LibraryScan(assets: [], skipped: skipped, excluded: found.excluded, statistics: statistics)
    }

    /// Runs the cache's and the chunk index's writes on the scan's own thread;
    /// whatever they throw is a cache failure.
    static func cacheWork(on disk: BlockingQueue, _ body: @escaping @Sendable () throws -> Void) async throws(Failure) {
        try await disk.run { () throws(Failure) in
            do { try body() } catch { throw .cache(error) }
        }
    }

    /// What the walk found, matched against the scan cache.
    private struct Walked: Sendable {
        var entries: [DirectoryWalker.Entry]
        var skipped: [SkippedEntry]
        var excluded: [RelativePath]
        /// `entries`' indices in path byte order, the order the cache streams its rows in.
        var byPath: [Int]
        /// One slot per walked file: filled here from the cache, later by the hashing workers.
        var files: ScanSlots
        var isSettled: [Bool]
        var filesFromCache: Int
    }

    /// Walks the library and takes every unchanged file's entry from the cache (blocking).
    ///
    /// The cache's rows are read on a second thread while this one walks: the
    /// walk waits on the kernel and the read on SQLite, and before either is done
    /// there is nothing to offer, so on a repeat push they were a third of the
    /// time with the other core (and the receiver) idle. The rows come in path
    /// order and are merged with the sorted walk afterwards; they are what the
    /// scan keeps anyway, plus the rows of files that are gone.
    private static func walk(_ rootPath: String, ignoring ignore: IgnoreRules, rememberedBy cache: (any ScanMemory)?) throws(Failure) -> Walked {
        let remembered = cache.map { cache in
            ConcurrentRead { () throws -> [IndexedFile] in
                var rows: [IndexedFile] = []
                try cache.forEachEntry { rows.append($0) }
                return rows
            }
        }
        let walk: DirectoryWalker.Found
        do throws(SystemError) {
            walk = try DirectoryWalker(rootPath: rootPath, ignore: ignore).walk()
        } catch {
            _ = try? remembered?.value()
            throw .cannotOpenLibrary(error)
        }
        let entries = walk.files
        let byPath = entries.indices.sorted { entries[$0].relativePath < entries[$1].relativePath }
        var found = Walked(entries: entries, skipped: walk.skipped, excluded: walk.excluded.sorted(), byPath: byPath, files: ScanSlots(count: entries.count),
                           isSettled: [Bool](repeating: false, count: entries.count), filesFromCache: 0)
        guard let remembered else { return found }
        let rows: [IndexedFile]
        do { rows = try remembered.value() } catch { throw .cache(error) }
        var cursor = 0
        for hit in rows {
            while cursor < byPath.count, entries[byPath[cursor]].relativePath < hit.path { cursor += 1 }
            guard cursor < byPath.count else { break }
            let entry = entries[byPath[cursor]]
            guard entry.relativePath == hit.path, hit.isUnchanged(entry.status) else { continue }
            var known = hit
            known.manifest.path = entry.relativePath  // one string for both
            known.manifest.permissions = entry.status.permissions  // not cached: a chmod leaves the bytes alone
            found.files[byPath[cursor]] = known
            found.filesFromCache += 1
            found.isSettled[byPath[cursor]] = true
        }
        return found
    }

    /// A run of whole directories, in walk order, and its files to hash.
    private struct Segment: Sendable {
        let range: Range<Int>
        /// Largest first, so the last file to finish is a small one and both cores stay busy to the end.
        let misses: [Int]
    }

    /// Cuts the walk into segments at directory boundaries, each closed once it
    /// has `limit.files` files or `limit.bytes` to hash (no asset spans
    /// directories, so each segment groups on its own).
    private static func segments(
        of entries: [DirectoryWalker.Entry], limit: (files: Int, bytes: UInt64)?, isKnown: (Int) -> Bool
    ) -> [Segment] {
        var segments: [Segment] = []
        var start = 0, bytes: UInt64 = 0
        func close(at end: Int) {
            guard end > start else { return }
            let misses = (start..<end).filter { !isKnown($0) }.sorted { entries[$0].status.size > entries[$1].status.size }
            segments.append(Segment(range: start..<end, misses: misses))
            start = end
            bytes = 0
        }
        for index in entries.indices {
            if let limit, index > start, index - start >= limit.files || bytes >= limit.bytes,
               entries[index].relativePath.directory != entries[index - 1].relativePath.directory {
                close(at: index)
            }
            if !isKnown(index) { bytes += entries[index].status.size }
        }
        close(at: entries.count)
        return segments
    }

    /// What the hashing workers share: the files in the order they take them,
    /// and how many of each segment's are still to do.
    private final class HashingRun: Sendable {
        let segments: [Segment]
        let entries: [DirectoryWalker.Entry]
        /// Every segment's misses, one after the other.
        let order: [Int]
        /// The segment of each position in `order`.
        let segmentOfPosition: [Int32]
        let left: LockedState<[Int]>
        let bytesToHash: UInt64
        let alreadyDone: Int
        let counters = ProgressCounters()
        let failures = LockedState<[SkippedEntry]>([])

        init(segments: [Segment], entries: [DirectoryWalker.Entry], alreadyDone: Int) {
            self.segments = segments
            self.entries = entries
            order = segments.flatMap(\.misses)
            segmentOfPosition = segments.enumerated().flatMap { index, segment in
                [Int32](repeating: Int32(index), count: segment.misses.count)
            }
            left = LockedState(segments.map(\.misses.count))
            bytesToHash = order.reduce(0) { $0 + entries[$1].status.size }
            self.alreadyDone = alreadyDone
        }
    }

    /// Hashes every miss on every core, in segment order, reporting each
    /// segment (`completions`) once its last file is done; segments with
    /// nothing to hash are reported at once. Returns the files that could not be read.
    private func hash(
        _ run: HashingRun, into files: ScanSlots, completions: AsyncStream<Int>.Continuation,
        progress: @escaping @Sendable (ScanProgress) -> Void
    ) async -> [SkippedEntry] {
        defer { completions.finish() }
        for (index, segment) in run.segments.enumerated() where segment.misses.isEmpty { completions.yield(index) }
        guard !run.order.isEmpty else { return [] }
        let digester = FileDigester(configuration: configuration)
        let root = rootPath
        let total = run.entries.count
        progress(ScanProgress(phase: .hashing, filesTotal: total, filesDone: run.alreadyDone, bytesToHash: run.bytesToHash, bytesHashed: 0))
        // The workers write straight into the scan's own slots (each index by one worker):
        // no array of results beside them, for 200,000 files that is tens of megabytes.
        await ParallelWork.forEach(
            count: run.order.count, workerCount: workerCount,
            makeScratch: { [configuration] in DigestScratch(configuration: configuration) },
            releaseScratch: { _ in },
            body: { position, scratch in
                let index = run.order[position]
                let entry = run.entries[index]
                let absolute = root + "/" + entry.relativePath.string
                do throws(FileDigester.Failure) {
                    let startedNs = Self.wallClockNs()
                    // A file read whole in one go yields its identifier from the bytes just hashed;
                    // a larger one (a video: the identifier sits in its `moov`) is opened again.
                    var identifier: String?
                    var readWhole = false
                    let (manifest, status) = try digester.manifest(
                        absolutePath: absolute, relativePath: entry.relativePath.string, expected: entry.status,
                        buffer: scratch.buffer, hasher: &scratch.hasher,
                        whole: { bytes in
                            readWhole = true
                            identifier = AppleContentIdentifierReader.contentIdentifier(path: absolute, wholeFile: bytes)
                        })
                    if !readWhole { identifier = AppleContentIdentifierReader.contentIdentifier(ofFileAtPath: absolute) }
                    // File times come from a coarse clock: a write just after we read, within the same
                    // tick, would leave the ctime as it was. Only a file left alone for a while before
                    // we read it can be recognised later by its ctime; any other is hashed again.
                    let settled = status.changeTimeNs < startedNs - Self.settlingTimeNs
                    files[index] = ScannedFile(manifest: manifest, inode: status.inode, contentIdentifier: identifier,
                                               changeTimeNs: settled ? status.changeTimeNs : nil)
                } catch {
                    run.failures.withLock { $0.append(SkippedEntry(path: entry.relativePath, reason: error.description)) }
                }
                let (done, bytes) = run.counters.add(bytes: entry.status.size)
                progress(ScanProgress(phase: .hashing, filesTotal: total, filesDone: run.alreadyDone + done,
                                      bytesToHash: run.bytesToHash, bytesHashed: bytes))
                let segment = Int(run.segmentOfPosition[position])
                let finished = run.left.withLock { left -> Bool in
                    left[segment] -= 1
                    return left[segment] == 0
                }
                if finished { completions.yield(segment) }
            })
        return run.failures.withLock { $0 }
    }

    /// How long a file must have been left alone before its hashing for its
    /// ctime to vouch for it later: far above any kernel timestamp tick, and
    /// above the 2 s granularity of the coarsest file systems.
    package static let settlingTimeNs: Int64 = 3_000_000_000

    package static func wallClockNs() -> Int64 {
        FileTime.now()
    }

    /// Groups files into assets one directory at a time (the walk lists each
    /// directory's files together, and no asset spans directories), so the
    /// grouper's working set is one directory's, not the library's.
    /// Empties `scanned` as it goes: each file's record is released once its asset holds it.
    private static func assets(from scanned: ScanSlots, in range: Range<Int>) -> [Asset] {
        var assets: [Asset] = []
        var start = range.lowerBound
        let count = range.upperBound
        while start < count {
            guard let first = scanned[start] else {
                start += 1
                continue
            }
            var end = start + 1
            while end < count, scanned[end].map({ $0.path.isInSameDirectory(as: first.path) }) ?? true { end += 1 }
            let run = (start..<end).compactMap { scanned.take(at: $0) }
            let files = run.map { GroupingFile(GroupingCandidate(path: $0.manifest.path, contentIdentifier: $0.contentIdentifier)) }
            for members in DirectoryGrouping.members(of: files) {
                assets.append(Asset(files: members.map { Asset.File(role: $0.role, manifest: run[$0.index].manifest) }))
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
    private let state = LockedState<(files: Int, bytes: UInt64)>((0, 0))

    func add(bytes: UInt64) -> (files: Int, bytes: UInt64) {
        state.withLock { value in
            value.files += 1
            value.bytes += bytes
            return value
        }
    }
}
