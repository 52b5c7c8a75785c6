/// Reads, verifies and (when worthwhile) compresses each chunk of a
/// broadcast once, however many peers need it.
///
/// Per-peer send tasks ask for chunks in the same order; the first to ask
/// reads the chunk from disk and checks it against the manifest, later ones
/// get the cached payload.
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

    enum Failure: Error, Sendable, Equatable {
        /// The file no longer has the bytes its manifest promised.
        case sourceChanged(path: String)
        case unreadable(path: String, reason: String)
    }

    private let rootPath: String
    private let settledStatus: [String: FileStatus]
    private let budgetBytes: Int
    private var demand: [Key: Int] = [:]
    private var cache: [Key: ChunkPayload] = [:]
    private var cacheOrder: [Key] = []
    private var cachedBytes = 0
    private var openFiles: [String: ReadOnlyFile] = [:]
    private(set) var diskReads = 0
    private(set) var bytesRead: UInt64 = 0

    private(set) var chunksHashed = 0

    init(rootPath: String, settledStatus: [String: FileStatus] = [:], budgetBytes: Int = 64 << 20) {
        self.rootPath = rootPath
        self.settledStatus = settledStatus
        self.budgetBytes = budgetBytes
    }

    /// Registers that one more peer will ask for `key`.
    func expect(_ keys: [Key]) {
        for key in keys { demand[key, default: 0] += 1 }
    }

    func payload(for key: Key, file: FileManifest, chunkOffset: UInt64) throws(Failure) -> ChunkPayload {
        defer { release(key) }
        if let cached = cache[key] { return cached }
        let chunk = file.chunks[key.chunkIndex]
        let handle: ReadOnlyFile
        if let open = openFiles[file.path] {
            handle = open
        } else {
            do { handle = try ReadOnlyFile(path: rootPath + "/" + file.path, nonBlocking: true) } catch {
                throw .unreadable(path: file.path, reason: error.message)
            }
            if openFiles.count > 64 { openFiles.removeAll() }
            openFiles[file.path] = handle
        }
        let bytes: [UInt8]
        do { bytes = try handle.read(atOffset: chunkOffset, count: Int(chunk.length)) } catch {
            throw .unreadable(path: file.path, reason: error.message)
        }
        diskReads += 1
        bytesRead += UInt64(bytes.count)
        guard bytes.count == Int(chunk.length) else { throw .sourceChanged(path: file.path) }
        // Hashing, where needed, runs in the sending job's prefetch, in parallel with the
        // encryption of the previous chunk.
        if !isSettled(file.path, handle) {
            chunksHashed += 1
            guard Blake2b.hash(bytes) == chunk.hash else { throw .sourceChanged(path: file.path) }
        }
        let payload = MediaType(path: file.path).isAlreadyCompressed ? ChunkPayload.raw(bytes) : ChunkPayload.encode(raw: bytes)
        if (demand[key] ?? 0) > 1 {
            cache[key] = payload
            cacheOrder.append(key)
            cachedBytes += payload.encodedLength
            evictOverBudget()
        }
        return payload
    }

    /// True when the file, just read, still shows the status the scan vouched for.
    private func isSettled(_ path: String, _ handle: ReadOnlyFile) -> Bool {
        guard let settled = settledStatus[path], let status = try? handle.status() else { return false }
        return status == settled
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
