import LFSyncContent
import LFSyncCrypto
import LFSyncSystem
import LFSyncWire

/// Reads, verifies and (when worthwhile) compresses each chunk of a
/// broadcast once, however many peers need it.
///
/// Per-peer send tasks ask for chunks in the same order, one offer batch after
/// another; the first to ask reads the chunk from disk and checks it against
/// the manifest, later ones get the cached payload. Demand is registered per
/// batch, when the first peer reaches it, for every peer still sending — so
/// the bookkeeping covers one batch or two, not the whole library.
///
/// The check: never send bytes the manifest does not describe. A file whose
/// `fstat` after the read still shows the status the scan vouched for (size,
/// mtime, inode and ctime — the ctime moves on any write, even one that puts
/// the mtime back) holds the bytes that were hashed, so its chunks go out
/// without a second BLAKE2b pass; any other chunk is hashed. The receiver
/// checks every file against its file hash either way. A chunk leaves the cache when every peer that
/// needed it has taken it, or when the cache is over its budget (a peer far
/// behind the others then reads it again — counted in `diskReads`).
actor BroadcastChunkReader {
    struct Key: Hashable {
        var contentID: ContentID
        var fileIndex: Int
        var chunkIndex: Int
    }

    /// A chunk a peer wants, and what reading it needs.
    struct Request: Sendable {
        var key: Key
        var file: FileManifest
        var offset: UInt64
        /// The status under which the scan vouched for the file's manifest, if it did.
        var settled: FileStatus?
    }

    enum Failure: Error, Sendable, Equatable {
        /// The file no longer has the bytes its manifest promised.
        case sourceChanged(path: RelativePath)
        case unreadable(path: RelativePath, reason: String)
    }

    private let rootPath: String
    private let budgetBytes: Int
    /// Peers that will still ask for the chunks of batches not begun yet.
    private var activePeers: Int
    /// Batches `0 ..< begunBatches` have their demand registered.
    private var begunBatches = 0
    private var demand: [Key: Int] = [:]
    private var cache: [Key: ChunkPayload] = [:]
    private var cacheOrder: [Key] = []
    private var cachedBytes = 0
    private var openFiles: [RelativePath: ReadOnlyFile] = [:]
    /// Reads under way, each awaited by the peers that asked for the same chunk meanwhile.
    private var reads: [Key: Eventual<Result<ChunkPayload, Failure>>] = [:]
    /// Reading, checking and encoding happen here, one chunk after another.
    private let disk = BlockingQueue(label: "lfsync.send.read")
    private(set) var diskReads = 0
    private(set) var bytesRead: UInt64 = 0

    private(set) var chunksHashed = 0

    init(rootPath: String, peerCount: Int, budgetBytes: Int = 64 << 20) {
        self.rootPath = rootPath
        activePeers = peerCount
        self.budgetBytes = budgetBytes
    }

    /// Registers every active peer's demand for the chunks of batch `index`,
    /// the first time any peer reaches it. Peers go through the batches in
    /// order, so a batch is begun only after the one before it.
    func beginBatch(_ index: Int, keys: [Key]) {
        guard index == begunBatches else { return }
        begunBatches += 1
        guard activePeers > 0 else { return }
        for key in keys { demand[key, default: 0] += activePeers }
    }

    /// A peer stops before the end (it failed, or was cut off) at batch
    /// `batch`: gives back every chunk it will not take of the batches begun
    /// so far — all of them but `settled` (taken or already given back) in
    /// `batch`, all of every later one — and is left out of the batches begun
    /// from now on.
    func leave(atBatch batch: Int, settled: Set<Key>, keysOfBatch: @Sendable (Int) -> [Key]) {
        activePeers -= 1
        guard batch < begunBatches else { return }
        for index in batch..<begunBatches {
            for key in keysOfBatch(index) where index > batch || !settled.contains(key) { release(key) }
        }
    }

    /// One chunk's payload (see `payloads(for:)`).
    /// - Parameter settled: the status under which the scan vouched for the file's manifest, if it did.
    func payload(for key: Key, file: FileManifest, chunkOffset: UInt64, settled: FileStatus?) async throws(Failure) -> ChunkPayload {
        let results = await payloads(for: [Request(key: key, file: file, offset: chunkOffset, settled: settled)])
        guard let result = results.first else { throw .sourceChanged(path: file.path) }
        return try result.get()
    }

    /// The payloads of a run of chunks, in the order asked. A chunk another
    /// peer took already comes from the cache, one another peer is reading is
    /// waited for; the rest are read, checked and encoded in one hop to the
    /// reader's thread — a folder of small files costs a hop per run, not one
    /// per file.
    func payloads(for requests: [Request]) async -> [Result<ChunkPayload, Failure>] {
        defer { for request in requests { release(request.key) } }
        var results = requests.map { Result<ChunkPayload, Failure>.failure(.sourceChanged(path: $0.file.path)) }
        var sharedReads: [(position: Int, reading: Eventual<Result<ChunkPayload, Failure>>)] = []
        var toRead: [Int] = []
        for (position, request) in requests.enumerated() {
            if let cached = cache[request.key] {
                results[position] = .success(cached)
            } else if let reading = reads[request.key] {
                // Another peer's read of this chunk is under way: it is read once, and shared.
                sharedReads.append((position, reading))
            } else {
                reads[request.key] = Eventual()
                toRead.append(position)
            }
        }
        if !toRead.isEmpty {
            let jobs = toRead.map { requests[$0] }
            var open: [RelativePath: ReadOnlyFile] = [:]
            // Handed to the thread; what is still worth keeping open comes back.
            for job in jobs { open[job.file.path] = openFiles.removeValue(forKey: job.file.path) ?? open[job.file.path] }
            let handedOver = HandedOver(open), rootPath = rootPath
            let batch = await disk.run { Self.read(jobs, open: handedOver.value, rootPath: rootPath) }
            for (position, read) in zip(toRead, batch.reads) {
                let key = requests[position].key
                if read.reachedDisk { diskReads += 1 }
                bytesRead += UInt64(read.bytesRead)
                if read.hashed { chunksHashed += 1 }
                if case let .success(payload) = read.result, (demand[key] ?? 0) > 1 {
                    cache[key] = payload
                    cacheOrder.append(key)
                    cachedBytes += payload.encodedLength
                    evictOverBudget()
                }
                reads.removeValue(forKey: key)?.resolve(read.result)
                results[position] = read.result
            }
            for (path, file) in batch.stillOpen.value {
                if openFiles.count > 64 { openFiles.removeAll() }
                openFiles[path] = file
            }
        }
        for (position, reading) in sharedReads { results[position] = await reading.wait() }
        return results
    }

    private struct Read: Sendable {
        var result: Result<ChunkPayload, Failure>
        /// The file, when this read opened it: kept open for its next chunks.
        var opened: HandedOver<ReadOnlyFile>?
        /// The file was opened and read from (an open that failed never got that far).
        var reachedDisk = false
        var bytesRead = 0
        var hashed = false
    }

    /// Reads a run of chunks, in order, on the reader's thread. Files with
    /// chunks after the one read stay open (`stillOpen`) for the next run;
    /// a file read to its end is closed.
    private static func read(
        _ jobs: [Request], open: [RelativePath: ReadOnlyFile], rootPath: String
    ) -> (reads: [Read], stillOpen: HandedOver<[RelativePath: ReadOnlyFile]>) {
        var files = open
        var reads: [Read] = []
        reads.reserveCapacity(jobs.count)
        for job in jobs {
            let path = job.file.path
            var read = Self.read(job.file, chunk: job.key.chunkIndex, at: job.offset, from: files[path].map(HandedOver.init),
                                 orPath: rootPath + "/" + path.string, settled: job.settled)
            if let opened = read.opened { files[path] = opened.value }
            read.opened = nil
            if job.key.chunkIndex + 1 >= job.file.chunks.count { files[path] = nil }
            reads.append(read)
        }
        return (reads, HandedOver(files))
    }

    /// Opens the file unless it is open already, reads a chunk, checks it and
    /// encodes it, on the reader's own thread: `open` and `pread` may wait for
    /// the disk, which must not hold the cooperative pool.
    private static func read(
        _ file: FileManifest, chunk index: Int, at offset: UInt64, from open: HandedOver<ReadOnlyFile>?, orPath path: String,
        settled: FileStatus?
    ) -> Read {
        var read = Read(result: .failure(.sourceChanged(path: file.path)))
        let handle: ReadOnlyFile
        if let open {
            handle = open.value
        } else {
            do { handle = try ReadOnlyFile(path: path, nonBlocking: true) } catch {
                return Read(result: .failure(.unreadable(path: file.path, reason: error.message)))
            }
            read.opened = HandedOver(handle)
        }
        let chunk = file.chunks[index]
        let bytes: [UInt8]
        read.reachedDisk = true
        do { bytes = try handle.read(atOffset: offset, count: Int(chunk.length)) } catch {
            read.result = .failure(.unreadable(path: file.path, reason: error.message))
            return read
        }
        read.bytesRead = bytes.count
        guard bytes.count == Int(chunk.length) else { return read }
        if settled == nil || (try? handle.status()) != settled {
            read.hashed = true
            guard Blake2b.hash(bytes) == chunk.hash else { return read }
        }
        read.result = .success(MediaType(path: file.path.string).isAlreadyCompressed ? ChunkPayload.raw(bytes) : ChunkPayload.encode(raw: bytes))
        return read
    }

    /// Forgets a peer's remaining demand (it failed or was cut).
    func abandon(_ keys: [Key]) {
        for key in keys { release(key) }
    }

    private func release(_ key: Key) {
        guard let count = demand[key] else { return }
        if count <= 1 {
            demand[key] = nil
            if let payload = cache.removeValue(forKey: key) { cachedBytes -= payload.encodedLength }
        } else {
            demand[key] = count - 1
        }
    }

    private func evictOverBudget() {
        while cachedBytes > budgetBytes, !cacheOrder.isEmpty {
            let oldest = cacheOrder.removeFirst()
            if let payload = cache.removeValue(forKey: oldest) { cachedBytes -= payload.encodedLength }
        }
        if cacheOrder.count > 4 * max(1, cache.count) { cacheOrder = cacheOrder.filter { cache[$0] != nil } }
    }
}

extension MediaType {
    /// Photos and videos are compressed formats already: trying zstd on them only burns CPU.
    var isAlreadyCompressed: Bool {
        switch self {
        case .stillImage, .video: true
        case .raw, .sidecar, .other: false
        }
    }
}
