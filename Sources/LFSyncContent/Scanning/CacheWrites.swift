import LFSyncSystem

/// A streaming scan's entries for the scan cache and chunk index, written in
/// large batches while the scan goes on.
///
/// Why batches: every commit writes each page it dirtied, and the chunk
/// index's hash index takes its inserts in random order, so a commit per
/// 1,024-file segment rewrote most of that index every time (a first push of
/// 200,000 files wrote about 1 GB into a 100 MB database). Why off the
/// segments' path: nothing in the push reads these rows, so a segment goes to
/// its offers as soon as it is hashed instead of waiting for a commit. One
/// batch is written at a time; the next waits for it, which bounds what is
/// held and keeps the writes in scan order. A crash loses at most the
/// unwritten batches, and those files are simply hashed again next time.
struct CacheWrites {
    /// Files gathered before a batch is written.
    static let batchFiles = 8192

    let disk: BlockingQueue
    let cache: (any ScanMemory)?
    let chunkIndex: (any ScanObserver)?
    private var gathered: [IndexedFile] = []
    /// The batch being written on the scan's thread, and what that write threw.
    private var writing: Eventual<Result<Void, LibraryScanner.Failure>>?

    init(disk: BlockingQueue, cache: (any ScanMemory)?, chunkIndex: (any ScanObserver)?) {
        self.disk = disk
        self.cache = cache
        self.chunkIndex = chunkIndex
    }

    /// Gathers `fresh`; once a batch is full, starts writing it (after the one before has been).
    /// Throws what the previous batch's write threw.
    mutating func add(_ fresh: [IndexedFile]) async throws(LibraryScanner.Failure) {
        guard cache != nil || chunkIndex != nil else { return }
        gathered += fresh
        if gathered.count >= Self.batchFiles { try await startWriting() }
    }

    /// Writes whatever is gathered and waits until every batch is written.
    mutating func finish() async throws(LibraryScanner.Failure) {
        if !gathered.isEmpty { try await startWriting() }
        try await waitForWriting()
    }

    private mutating func startWriting() async throws(LibraryScanner.Failure) {
        try await waitForWriting()
        let batch = gathered, disk = disk, cache = cache, chunkIndex = chunkIndex
        gathered = []
        let written = Eventual<Result<Void, LibraryScanner.Failure>>()
        writing = written
        // Queued on the scan's own thread: no task of its own, and `finish()` (or the next
        // batch) waits for it.
        disk.async {
            do {
                try cache?.remember(batch)
                try chunkIndex?.didHash(batch)
                written.resolve(.success(()))
            } catch {
                written.resolve(.failure(.cache(error)))
            }
        }
    }

    private mutating func waitForWriting() async throws(LibraryScanner.Failure) {
        guard let writing else { return }
        self.writing = nil
        try await writing.wait().get()
    }
}
