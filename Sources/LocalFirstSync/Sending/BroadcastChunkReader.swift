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
///
/// Encrypted once, too: a large chunk that more than one peer still needs, asked
/// for by a peer whose channel sends shared segments, is sealed under a one-time
/// key as it is read (PROTOCOL.md, "Shared segments"), and every such peer puts
/// the same sealed bytes on its wire — one encryption per chunk instead of one per
/// peer, which was most of a broadcasting sender's CPU.
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
        /// The cipher of the asking peer's shared segments, if its channel sends them.
        var segmentCipher: NoiseCipher?
    }

    /// A chunk ready to send: its payload, and that payload sealed once when
    /// other peers will send the same bytes.
    struct PreparedChunk: Sendable, Equatable {
        var payload: ChunkPayload
        var sealedOnce: OneTimeSeal?

        /// What goes to a peer that did not announce zstd: the chunk raw (the reader
        /// compresses once, for every peer), without the seal, which sealed the
        /// compressed bytes.
        func forPeer(acceptingZstd: Bool) throws(WireError) -> PreparedChunk {
            guard !acceptingZstd, case .zstd = payload else { return self }
            return PreparedChunk(payload: .raw(try payload.decoded()))
        }

        /// What keeping it in the cache costs.
        var cachedBytes: Int { payload.encodedLength + (sealedOnce?.sealed.count ?? 0) }
    }

    /// Below this, a chunk is not worth a segment of its own: a small file's chunk
    /// goes through each peer's channel with the runs of small chunks around it.
    static let smallestSealedChunk = 64 << 10

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
    private var cache: [Key: PreparedChunk] = [:]
    private var cacheOrder: [Key] = []
    private var cachedBytes = 0
    private var openFiles: [RelativePath: ReadOnlyFile] = [:]
    /// Reads under way, each awaited by the peers that asked for the same chunk meanwhile.
    private var reads: [Key: Eventual<Result<PreparedChunk, Failure>>] = [:]
    /// Reading, checking and encoding happen here, one chunk after another.
    private let disk = BlockingQueue(label: "lfsync.send.read")
    private(set) var diskReads = 0
    private(set) var bytesRead: UInt64 = 0

    private(set) var chunksHashed = 0
    /// Chunks sealed once for several peers (see the type's summary).
    private(set) var chunksSealed = 0

    /// What `paceWait` is measured on (tests pass a manual clock).
    private let clock: any Clock<Duration>

    init(rootPath: String, peerCount: Int, budgetBytes: Int = 32 << 20, clock: any Clock<Duration> = ContinuousClock()) {
        self.rootPath = rootPath
        activePeers = peerCount
        self.budgetBytes = budgetBytes
        self.clock = clock
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
        return try result.get().payload
    }

    /// The payloads of a run of chunks, in the order asked. A chunk another
    /// peer took already comes from the cache, one another peer is reading is
    /// waited for; the rest are read, checked and encoded in one hop to the
    /// reader's thread — a folder of small files costs a hop per run, not one
    /// per file.
    /// - Parameter peer: who asks (any number that tells the peers of a push apart).
    func payloads(for requests: [Request], by peer: Int = 0) async -> [Result<PreparedChunk, Failure>] {
        defer { for request in requests { release(request.key) } }
        if leader == peer, requests.contains(where: { cache[$0.key] == nil && reads[$0.key] == nil }) { await waitForRoom() }
        var results = requests.map { Result<PreparedChunk, Failure>.failure(.sourceChanged(path: $0.file.path)) }
        var sharedReads: [(position: Int, reading: Eventual<Result<PreparedChunk, Failure>>)] = []
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
            leader = peer
            // Sealed once only where another peer will send the same bytes.
            let jobs = toRead.map { position in
                var job = requests[position]
                if (demand[job.key] ?? 0) <= 1 { job.segmentCipher = nil }
                return job
            }
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
                if case let .success(prepared) = read.result {
                    if prepared.sealedOnce != nil { chunksSealed += 1 }
                    if (demand[key] ?? 0) > 1 {
                        cache[key] = prepared
                        cacheOrder.append(key)
                        cachedBytes += prepared.cachedBytes
                        evictOverBudget()
                    }
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
        var result: Result<PreparedChunk, Failure>
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
        // One context for the run: a run of sidecars made one per chunk, each allocating zstd's tables.
        let compressor = ZstdCompressor()
        for job in jobs {
            let path = job.file.path
            var read = Self.read(job.file, chunk: job.key.chunkIndex, at: job.offset, from: files[path].map(HandedOver.init),
                                 orPath: rootPath + "/" + path.string, settled: job.settled, sealWith: job.segmentCipher,
                                 compressor: compressor)
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
        settled: FileStatus?, sealWith segmentCipher: NoiseCipher?, compressor: borrowing ZstdCompressor
    ) -> Read {
        var read = Read(result: .failure(.sourceChanged(path: file.path)))
        let handle: ReadOnlyFile
        if let open {
            handle = open.value
        } else {
            do { handle = try ReadOnlyFile(path: path, nonBlocking: true, size: file.size) } catch {
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
            guard ContentHash.chunk(bytes) == chunk.hash else { return read }
        }
        let payload = MediaType(path: file.path.string).isAlreadyCompressed ? ChunkPayload.raw(bytes) : ChunkPayload.encode(raw: bytes, using: compressor)
        var prepared = PreparedChunk(payload: payload)
        if let segmentCipher, payload.encodedLength >= smallestSealedChunk {
            prepared.sealedOnce = OneTimeSeal.seal(payload.data, cipher: segmentCipher)
        }
        read.result = .success(prepared)
        return read
    }

    /// Forgets a peer's remaining demand (it failed or was cut).
    func abandon(_ keys: [Key]) {
        for key in keys { release(key) }
    }

    /// Keeps the peers of a broadcast within the cache of each other. The peer
    /// ahead — the last to read chunks no other had read — waits before reading
    /// more while the cache is full and the peers behind are still taking from
    /// it; without the wait, it ran so far ahead that the cache evicted chunks
    /// before the last peer took them, and those were read — and encrypted —
    /// again (on two cores shared with three receivers, half the corpus). Only
    /// the peer ahead waits: a peer behind that reads a chunk the others did not
    /// need never waits, so two peers never wait for each other. A peer behind
    /// that takes nothing for `paceWait` (stalled, or far slower) stops the
    /// pacing until it takes something again: then the cache evicts as before,
    /// and no peer waits on a stuck one for longer than that.
    private func waitForRoom() async {
        while pacing, cachedBytes >= budgetBytes {
            let seen = pace.withLock { $0 }
            let pace = pace
            let deadline = Deadline.after(Self.paceWait, on: clock) { pace.withLock { $0.expired += 1 } }
            let outcome = await pace.wait(orIfCancelled: PaceOutcome.cancelled) { state in
                state.releases != seen.releases ? .progressed : state.expired != seen.expired ? .stalled : nil
            }
            deadline.cancel()
            switch outcome {
            case .progressed: continue
            case .stalled:
                pacing = false
                pacingStops += 1
                return
            case .cancelled: return
            }
        }
    }

    /// How long the peers ahead wait for one behind to take a chunk from the cache.
    static let paceWait: Duration = .milliseconds(500)

    /// What the peer ahead waits on: cached chunks let go by their last peer,
    /// and the deadlines that end its waits.
    private struct Pace: Sendable {
        var releases = 0
        var expired = 0
    }

    private enum PaceOutcome: Sendable {
        case progressed, stalled, cancelled
    }

    private let pace = Monitor(Pace())
    /// Off while the peers behind take nothing from the cache (see `waitForRoom`).
    private var pacing = true
    /// The peer that last read chunks no other peer had read: the one ahead.
    private var leader: Int?
    private(set) var pacingStops = 0

    private func release(_ key: Key) {
        guard let count = demand[key] else { return }
        if count <= 1 {
            demand[key] = nil
            if let prepared = cache.removeValue(forKey: key) {
                cachedBytes -= prepared.cachedBytes
                pace.withLock { $0.releases += 1 }
                pacing = true
            }
        } else {
            demand[key] = count - 1
        }
    }

    /// While the peers are paced, the run read after a wait may take the cache a
    /// little past its budget (a quarter: a run is one chunk or a few small ones,
    /// a few MiB with its sealed copy) without pushing out what the peers behind
    /// still need; otherwise the budget holds.
    private func evictOverBudget() {
        let limit = pacing ? budgetBytes + budgetBytes / 4 : budgetBytes
        while cachedBytes > limit, !cacheOrder.isEmpty {
            let oldest = cacheOrder.removeFirst()
            if let prepared = cache.removeValue(forKey: oldest) { cachedBytes -= prepared.cachedBytes }
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
