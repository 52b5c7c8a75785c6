#if canImport(Glibc)
import Glibc
#endif
internal import CLinux
import LFSyncContent
import LFSyncCrypto
import LFSyncSystem
import LFSyncStore

/// One file content being received: chunks land in its partial in the
/// staging area, each checked against its hash before it is written;
/// `verify()` turns the complete partial into a `StagedFile`. Only the content
/// matters here — size, file hash and chunk list — not the paths it will stand at.
///
/// **No descriptor held.** A library of 200,000 files must not need 200,000
/// open files, nor even one per file of an offer. The partial is created
/// lazily, by the first chunk written to it (a plan that is declined or fails
/// leaves nothing behind, not even an empty sparse file), and every operation
/// opens it by name and closes it again: the receiver holds at most one
/// partial descriptor per operation in progress, whatever the size of the
/// push. Opening by name is also the ownership check: the descriptor must
/// lead to the very inode this object created or adopted (see
/// `StagingArea`), or the partial was taken by another transfer.
///
/// **One lock per content.** Every `IncomingFile` of a file hash in the
/// process shares one `PartialLock`, held around each operation on the
/// partial — the ownership check and the write it allows, adopting, and
/// `verify()` from its rename to its verdict — so no write can land in a
/// partial another transfer is finishing or has finished (see `PartialLock`).
///
/// **One hash per received byte, and nothing read back.** A file's hash is made
/// from its chunk list (`ContentHash.file`), so the manifest's chunk list *is*
/// its file hash: two transfers of one file hash share one chunk list, size
/// and cut points. Every chunk is checked against its hash before it is
/// written (`write(chunkAt:bytes:)`), copied (`copyChunk(at:from:)`) or kept
/// from an adopted partial (`prepare` re-hashes those), so a partial never
/// holds a byte nobody verified, and a complete partial is the file: `verify()`
/// renames it and checks its size, and reads nothing.
///
/// **Resume without bookkeeping.** Nothing records which chunks have arrived:
/// the partial is its own record. After a crash of either side, `prepare`
/// re-hashes each chunk range of the partial and keeps the ones that match
/// the manifest. The cost is one read of the partial's data on resume (ranges
/// that are still holes in the sparse file are skipped without reading); in
/// exchange a journal can never disagree with the data, and a chunk torn by
/// the crash simply fails its hash and is fetched again.
///
/// **One-chunk files skip the partial.** Most files of a photo library are a
/// single chunk (sidecars, small JPEGs); they cannot be resumed part-way, so
/// a shared `<hash>.partial` buys them nothing. Such a file is created under a
/// private staged name straight away and `verify()` renames nothing — one
/// rename less per file on the receiver's hottest path.
///
/// Memory is bounded by one chunk (≤ 16 MiB, typically ≤ 1 MiB) plus 1 MiB of
/// read buffer; no file is ever held whole.
///
/// Not `Sendable`: it is meant to be owned by one engine actor at a time.
package final class IncomingFile {
    package let manifest: FileManifest
    package let staging: StagingArea
    /// Shared with every other `IncomingFile` of this content in the process.
    private let lock: PartialLock
    /// The partial generation (see `PartialLock.State`) this object created or adopted.
    private var generation: UInt64 = 0
    private let partialName: String
    /// Set when the file was created under its staged name straight away (see
    /// `withPartial`): `verify()` then has nothing to rename.
    private var directStagedName: String?
    /// Where our bytes are: the partial, or the file staged directly.
    private var fileName: String { directStagedName ?? partialName }
    /// Device and inode of our partial, once it exists: while `partialName`
    /// still leads to them, the partial has not been taken by another
    /// transfer's `verify()`.
    private var identity: FileIdentity?
    /// Start offset of every chunk, plus the file size at the end.
    private let offsets: [UInt64]
    /// We created the partial: it holds nothing we did not write.
    private var isNew = false
    private var present: ChunkBitmap
    private var isFinished = false
    /// Bytes promised in the staging area's `promisedSpace` and not written yet.
    private var promised: UInt64 = 0

    /// Read from a one-chunk file's bytes as they were written.
    package private(set) var embeddedIdentifier = EmbeddedIdentifier.unknown

    /// Chunks this object has stored or found so far (written, copied, or
    /// re-hashed when adopting a partial), every one verified; no I/O.
    package var presentChunks: ChunkBitmap { present }

    /// Bytes of the chunks in `presentChunks`.
    package var presentByteCount: UInt64 {
        guard present.count > 0 else { return 0 }
        var total: UInt64 = 0
        for index in manifest.chunks.indices where present.contains(index) { total += UInt64(manifest.chunks[index].length) }
        return total
    }

    /// Whether this object made the partial (so a failed plan may remove it).
    package var createdPartial: Bool { isNew && identity != nil }

    private var displayPath: String { StagingArea.displayPath(of: partialName) }

    /// Tests only: runs inside `verify()` once the file is read back and
    /// judged, while the partial's lock is still held.
    package var testHookInFinish: (() -> Void)?
    /// Tests only: runs inside a write once the ownership check passed, just
    /// before the chunk is stored, while the partial's lock is held.
    package var testHookBeforeStore: (() -> Void)?

    private init(manifest: FileManifest, staging: StagingArea, offsets: [UInt64]) {
        self.manifest = manifest
        self.staging = staging
        partialName = StagingArea.partialName(for: manifest.fileHash)
        self.offsets = offsets
        present = ChunkBitmap(chunkCount: manifest.chunks.count)
        lock = staging.partialLocks.acquire(manifest.fileHash)
    }

    deinit {
        // A one-chunk file staged directly under its private name has nothing to resume, and
        // the staging clean-up leaves staged names alone: if this transfer never finished it
        // (a failed write, a dropped offer), nobody else ever will.
        if let name = directStagedName, !isFinished { unlinkat(staging.directory.rawValue, name, 0) }
        staging.promisedSpace.release(promised)
        staging.partialLocks.release(manifest.fileHash)
    }

    /// Adopts `<fileHash>.partial` when an earlier or concurrent transfer of the
    /// same content left one — re-hashing its chunks to learn which are there —
    /// and otherwise creates nothing yet (the first write does). Holds no
    /// descriptor when it returns. While the object lives, the staging
    /// clean-up leaves this content's partial alone.
    ///
    /// A content of at most one chunk does not look: it is staged directly under
    /// a private name (see `withPartial`), so a partial of its hash could only
    /// come from a manifest that cut the same bytes into several chunks — rare,
    /// and one chunk fetched again costs less than a failed `open` for every
    /// small file received.
    package static func prepare(in staging: StagingArea, manifest: FileManifest) throws(ReceiveError) -> IncomingFile {
        let file = IncomingFile(manifest: manifest, staging: staging, offsets: try chunkOffsets(of: manifest))
        guard manifest.chunks.count > 1 else { return file }
        try file.lock.withLock { state throws(ReceiveError) in
            if try file.adoptExistingPartial(&state) {
                try file.hashPresentChunks(&state)
            }
        }
        return file
    }

    /// Sets aside, in the staging area's free-space count, the bytes this file
    /// still lacks: its offer was accepted, and later plans must not count on
    /// room these chunks will take. Given back as they are written, the rest
    /// when the object goes. Once only.
    package func promiseMissingBytes() {
        lock.withLock { _ in
            guard promised == 0, !isFinished else { return }
            promised = manifest.size - min(manifest.size, presentByteCount)
            staging.promisedSpace.promise(promised)
        }
    }

    /// Files at least this large start writing back as their chunks arrive.
    package static let earlyWritebackSize: UInt64 = 4 << 20

    /// Every file lfsync creates in staging: private to the user, and never
    /// changed afterwards — no state is kept in mode bits.
    static let fileMode: mode_t = 0o600

    /// Chunk start offsets; refuses a chunk list that cannot describe the file
    /// (a manifest built in memory has not been through the decoder's checks).
    private static func chunkOffsets(of manifest: FileManifest) throws(ReceiveError) -> [UInt64] {
        guard manifest.chunks.count <= FileManifest.Limits.maxChunkCount else {
            throw .invalidManifest("\(manifest.chunks.count) chunks (limit \(FileManifest.Limits.maxChunkCount))")
        }
        guard manifest.size <= UInt64(Int64.max) else { throw .invalidManifest("size \(manifest.size)") }
        var offsets: [UInt64] = []
        offsets.reserveCapacity(manifest.chunks.count + 1)
        var total: UInt64 = 0
        for chunk in manifest.chunks {
            guard chunk.length > 0, chunk.length <= ChunkerConfiguration.absoluteMaxChunkSize else {
                throw .invalidManifest("chunk length \(chunk.length)")
            }
            offsets.append(total)
            total += UInt64(chunk.length)
            guard total <= manifest.size else { break }
        }
        guard total == manifest.size else {
            throw .invalidManifest("chunk lengths add up to \(total) or more, file size is \(manifest.size)")
        }
        offsets.append(total)
        return offsets
    }

    // MARK: - The partial on disk

    /// Opens an existing partial of this content and makes it ours to share,
    /// cutting back a length no honest manifest gave it. False when there is none.
    /// The caller holds the lock.
    private func adoptExistingPartial(_ state: inout PartialLock.State) throws(ReceiveError) -> Bool {
        let directory = staging.directory.rawValue
        // Second round only after removing something unusable under the name.
        for _ in 0..<2 {
            let fd = openat(directory, partialName, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
            if fd < 0 {
                if errno == ENOENT { return false }
                guard errno == ELOOP else { throw .system(SystemError.current("open", path: displayPath)) }
            } else {
                var raw = stat()
                // A hard link could make our writes land in a file elsewhere; a file of another
                // user's, or one others may read, could hand them the incoming bytes.
                if fstat(fd, &raw) == 0, FileStatus(raw).kind == .regular, raw.st_nlink == 1,
                   raw.st_uid == geteuid(), raw.st_mode & 0o7777 == Self.fileMode {
                    let file = OwnedDescriptor(taking: fd)
                    try adopt(file, status: FileStatus(raw), &state)
                    return true
                }
                close(fd)
            }
            // Not a plain private file of ours (symlink, FIFO, hard link, another user's or a
            // readable file): remove the name, never follow it.
            guard unlinkat(directory, partialName, 0) == 0 || errno == ENOENT else {
                throw .system(SystemError.current("unlink", path: displayPath))
            }
        }
        return false
    }

    /// Takes an existing partial as ours: marks it shared, and cuts it to the manifest's size — only while the name still leads to it (another
    /// process's `verify()` may have taken it: resizing would change a file already verified).
    /// Adopting counts as touching the partial for the staging clean-up: its mtime is set to now.
    private func adopt(_ file: OwnedDescriptor, status: FileStatus, _ state: inout PartialLock.State) throws(ReceiveError) {
        state.exclusive = false
        if status.size > manifest.size {
            let current = try ReceiveError.system { () throws(SystemError) in try staging.directory.statusOfEntry(named: partialName, displayPath) }
            guard FileIdentity(status).isSame(as: current) else { throw .partialTaken(fileHash: manifest.fileHash) }
            while ftruncate(file.rawValue, off_t(manifest.size)) != 0 {
                guard errno == EINTR else { throw .system(SystemError.current("ftruncate", path: displayPath)) }
            }
        }
        // Best effort: a file system that refuses times only makes the partial look older.
        _ = futimens(file.rawValue, nil)
        identity = FileIdentity(status)
        generation = state.generation
        isNew = false
    }

    /// Runs `body` with the partial open (creating it the first time), after
    /// checking the name still leads to our inode and the partial is still
    /// the generation we joined. The descriptor is closed when `body` returns.
    /// The caller holds the lock.
    /// - Returns: `body`'s result; `shared` tells whether another transfer has opened the partial too.
    ///
    /// A file of at most one chunk is written whole by one call, so no other
    /// transfer can ever need to share it half-written: it is created under a
    /// private staged name at once, and finishing it renames nothing — one
    /// rename per received file instead of two, for most files of a photo
    /// library by count.
    private func withPartial<T>(
        _ state: inout PartialLock.State, _ body: (OwnedDescriptor, _ shared: Bool) throws(ReceiveError) -> T
    ) throws(ReceiveError) -> T {
        let directory = staging.directory.rawValue
        if identity == nil {
            let direct = manifest.chunks.count <= 1 ? staging.stagedName(for: manifest.fileHash) : nil
            let fd = (direct ?? partialName).withCString { openat(directory, $0, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, Self.fileMode) }
            if fd >= 0 {
                directStagedName = direct
                let file = OwnedDescriptor(taking: fd)
                let status = try ReceiveError.system { () throws(SystemError) in try file.status(displayPath) }
                identity = FileIdentity(status)
                isNew = true
                if direct == nil {
                    // A new partial: whoever held an earlier one of this content holds nothing now.
                    state.generation += 1
                    state.exclusive = true
                    generation = state.generation
                }
                return try body(file, false)
            }
            guard errno == EEXIST, direct == nil else { throw .system(SystemError.current("create", path: displayPath)) }
            // Another transfer of the same content created it meanwhile: share it.
            guard try adoptExistingPartial(&state) else { throw .partialTaken(fileHash: manifest.fileHash) }
        }
        // A private staged name is ours alone; a partial must still be the generation we joined.
        guard directStagedName != nil || generation == state.generation else { throw .partialTaken(fileHash: manifest.fileHash) }
        let fd = openat(directory, fileName, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT || errno == ELOOP { throw .partialTaken(fileHash: manifest.fileHash) }
            throw .system(SystemError.current("open", path: displayPath))
        }
        let file = OwnedDescriptor(taking: fd)
        let status = try ReceiveError.system { () throws(SystemError) in try file.status(displayPath) }
        guard let identity, identity.isSame(as: status) else { throw .partialTaken(fileHash: manifest.fileHash) }
        return try body(file, isShared(state))
    }

    /// Whether another transfer may have changed the partial since this
    /// object created it (always, for a partial it adopted). A file staged
    /// directly has a private name: nobody else can open it.
    private func isShared(_ state: PartialLock.State) -> Bool {
        directStagedName == nil && (!isNew || !state.exclusive)
    }

    /// Re-hashes each chunk range of an adopted partial and keeps those that match.
    /// The caller holds the lock.
    private func hashPresentChunks(_ state: inout PartialLock.State) throws(ReceiveError) {
        try withPartial(&state) { file, _ throws(ReceiveError) in
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
            defer { buffer.deallocate() }
            var regions = DataRegions(descriptor: file.rawValue)
            for (index, chunk) in manifest.chunks.enumerated() where !present.contains(index) {
                let start = offsets[index]
                guard regions.isData(start, end: start + UInt64(chunk.length)) else { continue }
                let hash = try ReceiveError.system { () throws(SystemError) in
                    try file.chunkHash(from: start, length: UInt64(chunk.length), buffer: buffer, displayPath)
                }
                if hash == chunk.hash { present.insert(index) }
            }
        }
    }

    /// Removes the partial if this object created it and it is still ours: what
    /// a plan that failed after copying chunks locally leaves behind.
    package func discardIfCreated() {
        lock.withLock { state in
            guard createdPartial, !isFinished, let identity, directStagedName != nil || generation == state.generation,
                  identity.isSame(as: try? staging.directory.statusOfEntry(named: fileName, displayPath))
            else { return }
            unlinkat(staging.directory.rawValue, fileName, 0)
            if directStagedName == nil { state.generation += 1 }
        }
    }

    // MARK: - Writing

    /// Stores chunk `index`, checking its length and its hash *before* anything
    /// is written: no refused byte reaches the disk, and the partial holds only
    /// verified bytes (see the type's doc).
    /// - Parameter hash: `ContentHash.chunk(bytes)`, when the caller had it computed
    ///   already (on another core, while this thread wrote the chunk before).
    package func write(chunkAt index: Int, bytes: ArraySlice<UInt8>, hash: Hash256? = nil) throws(ReceiveError) {
        let chunk = try writableChunk(index)
        guard bytes.count == Int(chunk.length) else {
            throw .chunkLengthMismatch(index: index, expected: chunk.length, actual: bytes.count)
        }
        // Checked before the partial is even opened (or created), outside the lock.
        guard (hash ?? ContentHash.chunk(bytes)) == chunk.hash else { throw .chunkHashMismatch(index: index) }
        // The check that the partial is still ours and the write are one step: no other
        // transfer's verify() can come between them (see `PartialLock`).
        try lock.withLock { state throws(ReceiveError) in
            try withPartial(&state) { file, _ throws(ReceiveError) in
                testHookBeforeStore?()
                try store(bytes, at: index, in: file)
            }
        }
    }

    package func write(chunkAt index: Int, bytes: [UInt8]) throws(ReceiveError) {
        try write(chunkAt: index, bytes: bytes[...])
    }

    /// Copies chunk `index` from bytes the receiver already has, re-verifying
    /// them: the file may have changed since it was indexed.
    /// - Returns: `false`, not an error, when the source is gone, unreadable,
    ///   a symlink, or no longer holds those bytes — ask the peer instead.
    ///   Errors are for the destination side only.
    package func copyChunk(at index: Int, from source: ChunkSource) throws(ReceiveError) -> Bool {
        let chunk = try writableChunk(index)
        if present.contains(index) { return true }
        guard let bytes = readSource(source, length: chunk.length), ContentHash.chunk(bytes) == chunk.hash else { return false }
        try lock.withLock { state throws(ReceiveError) in
            try withPartial(&state) { file, _ throws(ReceiveError) in try store(bytes[...], at: index, in: file) }
        }
        return true
    }

    // MARK: - Finishing

    /// Ends the transfer: every chunk must be present. The partial is renamed to
    /// a private `.staged` name (so no other transfer writes to it again) and
    /// must still be our inode, of the manifest's size. Nothing is read back:
    /// every chunk in it was verified before it was written, and the chunk list
    /// is the file hash (see the type's doc). All of it under the partial's lock:
    /// a write of another transfer of this content either lands before the rename
    /// or finds the partial gone.
    ///
    /// This proves the bytes written form the announced file, not that the disk
    /// kept them: the installer fsyncs each copy before it renames it into place.
    package func verify() throws(ReceiveError) -> StagedFile {
        guard !isFinished else { throw .alreadyFinished(fileHash: manifest.fileHash) }
        guard present.isComplete else {
            throw .missingChunks(fileHash: manifest.fileHash, missing: present.missingCount)
        }
        // From the rename to the verdict under the lock: no write of another transfer lands in between.
        return try lock.withLock { state throws(ReceiveError) in try verify(&state) }
    }

    private func verify(_ state: inout PartialLock.State) throws(ReceiveError) -> StagedFile {
        // An empty file has no chunk that would have created its partial.
        if identity == nil { try withPartial(&state) { _, _ in } }
        guard let identity, directStagedName != nil || generation == state.generation else {
            throw .partialTaken(fileHash: manifest.fileHash)
        }
        let directory = staging.directory
        var stagedName = directStagedName ?? staging.stagedName(for: manifest.fileHash)
        var display: String { self.displayPath }  // built only for an error
        var outcome = NoReplaceRename.Outcome.renamed
        if directStagedName == nil {
            outcome = try ReceiveError.system { () throws(SystemError) in
                try NoReplaceRename.rename(partialName, in: directory, to: stagedName, in: directory, what: display)
            }
        }
        if outcome == .destinationExists {  // a 64-bit random collision; try once more
            stagedName = staging.stagedName(for: manifest.fileHash)
            outcome = try ReceiveError.system { () throws(SystemError) in
                try NoReplaceRename.rename(partialName, in: directory, to: stagedName, in: directory, what: display)
            }
            guard outcome == .renamed else { throw .system(SystemError("rename", path: display, errno: EEXIST)) }
        }
        let staged = StagedFile(fileHash: manifest.fileHash, size: manifest.size,
                                embeddedIdentifier: embeddedIdentifier, staging: staging, name: stagedName, identity: identity)
        var size = manifest.size
        // Staged directly under a name nobody else can open, and written whole (most files of a
        // photo library): nothing to look up. The installer checks, right after its rename, that
        // the name led to this very file, of this size.
        if directStagedName == nil {
            do throws(ReceiveError) {
                let status = try ReceiveError.system { () throws(SystemError) in try directory.statusOfEntry(named: stagedName, staged.displayPath) }
                // What the name led to when we renamed it must still be our partial.
                guard let status, identity.isSame(as: status) else { throw ReceiveError.system(SystemError("rename", path: display, errno: ESTALE)) }
                size = status.size
            } catch {
                // Give the verified chunks back to the next attempt.
                _ = try? NoReplaceRename.rename(stagedName, in: directory, to: partialName, in: directory, what: display)
                throw error
            }
        }
        isFinished = true
        if directStagedName == nil {
            // The partial is gone from its name, for good: every other holder is now out of date.
            state.generation += 1
            state.exclusive = false
        }
        guard size == manifest.size else {
            try? staged.discard()
            testHookInFinish?()
            throw .stagedFileWrongSize(fileHash: manifest.fileHash, size: size, expected: manifest.size)
        }
        testHookInFinish?()
        return staged
    }

    // MARK: - Helpers

    private func writableChunk(_ index: Int) throws(ReceiveError) -> ChunkRef {
        guard !isFinished else { throw .alreadyFinished(fileHash: manifest.fileHash) }
        guard index >= 0, index < manifest.chunks.count else {
            throw .chunkIndexOutOfRange(index: index, chunkCount: manifest.chunks.count)
        }
        return manifest.chunks[index]
    }

    /// Writes a chunk the caller has checked into the open partial.
    private func store(_ bytes: ArraySlice<UInt8>, at index: Int, in file: OwnedDescriptor) throws(ReceiveError) {
        // The path is spelled out only for an error: once per received file, eagerly, it was two allocations.
        try ReceiveError.system { () throws(SystemError) in try file.write(bytes, at: offsets[index], self.displayPath) }
        // The sync before installing must not find a large file still dirty: that would stall
        // the install queue while the disk catches up. Start writing its chunks back now, in
        // the background (advisory; the sync still decides). Small files are left to that one
        // sync per group: a writeback each would cost a disk request per file.
        if manifest.size >= Self.earlyWritebackSize {
            _ = lfsync_start_writeback(file.rawValue, Int64(offsets[index]), Int64(bytes.count))
        }
        present.insert(index)
        if promised > 0 {
            let written = min(promised, UInt64(bytes.count))
            promised -= written
            staging.promisedSpace.release(written)
        }
        if manifest.chunks.count == 1 {
            // Sniffed first: most small files (sidecars, documents) are no container worth copying to parse.
            let format = MediaContainerFormat.sniff(Array(bytes.prefix(MediaContainerFormat.sniffLength)))
            embeddedIdentifier = .known(format.flatMap { try? AppleContentIdentifierReader.contentIdentifier(in: Array(bytes), format: $0) })
        }
    }

    /// Reads `length` bytes from `source`, or `nil` for any reason at all.
    private func readSource(_ source: ChunkSource, length: UInt32) -> [UInt8]? {
        let file: OwnedDescriptor
        let offset: UInt64
        let display: String
        switch source {
        case let .library(location):
            guard location.length == length,
                  let path = try? LibraryPath.validate(location.path),
                  let opened = try? staging.library.openFileForReading(path)
            else { return nil }
            (file, offset, display) = (opened, location.offset, path.description)
        case let .partial(fileHash, sourceOffset, sourceLength):
            guard sourceLength == length else { return nil }
            let name = StagingArea.partialName(for: fileHash)
            let fd = openat(staging.directory.rawValue, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
            guard fd >= 0 else { return nil }
            (file, offset, display) = (OwnedDescriptor(taking: fd), sourceOffset, StagingArea.displayPath(of: name))
        }
        guard let status = try? file.status(display), status.kind == .regular,
              offset <= status.size, UInt64(length) <= status.size - offset,
              let bytes = try? file.read(count: Int(length), at: offset, display), bytes.count == Int(length)
        else { return nil }
        return bytes
    }
}

/// Answers "could this byte range hold written data?" with `SEEK_DATA` /
/// `SEEK_HOLE`, so resuming a half-received file does not read and hash the
/// half that was never written. Conservative: any hole inside a range makes
/// it "not data" (it would then be re-fetched, never wrongly trusted); a file
/// system without hole support answers "data" everywhere.
private struct DataRegions {
    let descriptor: Int32
    /// A range known to be all data.
    private var known: Range<UInt64> = 0..<0

    // From <unistd.h> under _GNU_SOURCE.
    private static let seekData: Int32 = 3
    private static let seekHole: Int32 = 4

    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    mutating func isData(_ start: UInt64, end: UInt64) -> Bool {
        if start >= known.lowerBound, end <= known.upperBound { return true }
        let data = lseek(descriptor, off_t(start), Self.seekData)
        if data < 0 {
            // ENXIO: only holes from here to the end of the file.
            return errno != ENXIO
        }
        guard UInt64(data) == start else { return false }
        let hole = lseek(descriptor, off_t(start), Self.seekHole)
        guard hole >= 0 else { return true }
        known = start..<UInt64(hole)
        return end <= UInt64(hole)
    }
}
