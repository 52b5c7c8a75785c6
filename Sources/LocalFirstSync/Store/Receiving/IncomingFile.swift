#if canImport(Glibc)
import Glibc
#endif
internal import CLinux

/// One file being received: chunks land in its partial in the staging area;
/// `finish()` checks the whole against the file hash and turns it into a
/// `StagedFile`.
///
/// **One hash per received byte.** A chunk from the peer is written after its
/// length is checked; its own hash is checked only when the partial is shared
/// with another transfer (see `writeReceived(chunkAt:bytes:)`). An unshared
/// partial's bytes are all covered by the file hash `finish()` checks before
/// anything is installed, so hashing each chunk as well would be a second
/// BLAKE2b pass over every byte for nothing. A partial may therefore hold
/// bytes nobody has verified yet, and nothing trusts them unchecked: reopening
/// re-hashes every chunk (`verifiedChunks()`), and a chunk copied out of a
/// partial is re-hashed (`copyChunk(at:from:)`).
///
/// **Resume without bookkeeping.** Nothing records which chunks have arrived:
/// the partial is its own record. After a crash of either side,
/// `verifiedChunks()` re-hashes each chunk range of the partial and keeps the
/// ones that match the manifest. The cost is one read of the partial's data
/// on resume (ranges that are still holes in the sparse file are skipped
/// without reading); in exchange a journal can never disagree with the data,
/// and a chunk torn by the crash simply fails its hash and is fetched again.
///
/// Memory is bounded by one chunk (≤ 16 MiB, typically ≤ 1 MiB) plus 1 MiB of
/// read buffer; no file is ever held whole.
///
/// Not `Sendable`: it is meant to be owned by the engine's actor.
public final class IncomingFile {
    public let manifest: FileManifest
    public let staging: StagingArea
    private let descriptor: OwnedDescriptor
    private let partialName: String
    /// Device and inode of our partial: while `partialName` still names them,
    /// the partial has not been taken by another transfer's `finish()`.
    private let identity: (device: UInt64, inode: UInt64)
    /// Start offset of every chunk, plus the file size at the end.
    private let offsets: [UInt64]
    /// We created the partial: it holds nothing we did not write.
    private let isNew: Bool
    private var present: ChunkBitmap
    private var isFinished = false
    /// The file hash over the leading chunks stored so far, in order: chunks
    /// normally arrive in order, so `finish()` rarely has to read anything back.
    private var fileHasher = Blake2b()
    /// How many leading chunks `fileHasher` has seen.
    private var hashedChunkCount = 0

    /// False once a chunk was stored on the strength of the file hash alone
    /// (`writeReceived` on an unshared partial): the file hash `finish()` checks
    /// proves the bytes, but the manifest's chunk *list* is then the peer's word,
    /// not something this device verified.
    public private(set) var everyChunkVerified = true

    /// Chunks this object has stored or found so far (written, copied, or
    /// re-hashed by `verifiedChunks()`); no I/O. A written chunk of an unshared
    /// partial counts before `finish()` has checked it.
    public var presentChunks: ChunkBitmap { present }

    private var displayPath: String { StagingArea.displayPath(of: partialName) }

    private init(
        manifest: FileManifest, staging: StagingArea, descriptor: OwnedDescriptor, partialName: String,
        identity: (device: UInt64, inode: UInt64), offsets: [UInt64], isNew: Bool
    ) {
        self.manifest = manifest
        self.staging = staging
        self.descriptor = descriptor
        self.partialName = partialName
        self.identity = identity
        self.offsets = offsets
        self.isNew = isNew
        present = ChunkBitmap(chunkCount: manifest.chunks.count)
    }

    /// Creates `<fileHash>.partial` (mode 0600, `O_NOFOLLOW`) or reopens it
    /// when an earlier or concurrent transfer of the same content left one,
    /// and sizes it to the manifest (sparse: no space is used until written).
    /// Reopening reads nothing; call `verifiedChunks()` to learn what is there.
    public static func open(in staging: StagingArea, manifest: FileManifest) throws(ReceiveError) -> IncomingFile {
        let offsets = try chunkOffsets(of: manifest)
        let name = StagingArea.partialName(for: manifest.fileHash)
        let display = StagingArea.displayPath(of: name)
        let directory = staging.directory.rawValue
        var isNew = false
        var fd: Int32 = -1
        // Second round only after removing something unusable under the name.
        for _ in 0..<2 {
            fd = openat(directory, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if fd >= 0 {
                isNew = true
                break
            }
            guard errno == EEXIST else { throw .system(SystemError.current("create", path: display)) }
            fd = openat(directory, name, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
            if fd >= 0 {
                var raw = stat()
                // A hard link could make our writes land in a file elsewhere.
                if fstat(fd, &raw) == 0, FileStatus(raw).kind == .regular, raw.st_nlink == 1 { break }
                close(fd)
                fd = -1
            } else if errno != ELOOP {
                throw .system(SystemError.current("open", path: display))
            }
            // Not a plain file of ours (symlink, FIFO, hard link): remove the name, never follow it.
            guard unlinkat(directory, name, 0) == 0 || errno == ENOENT else {
                throw .system(SystemError.current("unlink", path: display))
            }
        }
        guard fd >= 0 else { throw .system(SystemError("open", path: display, errno: EEXIST)) }
        let file = OwnedDescriptor(taking: fd)
        if !isNew {
            // Mark the partial as shared before changing anything in it: its creator then knows
            // that bytes it hashed on the way in may have been changed by a manifest that merely
            // claims the same file hash, and reads the file back (see `finish()`).
            guard fchmod(fd, Self.sharedMode) == 0 else { throw .system(SystemError.current("chmod", path: display)) }
        }
        let status = try ReceiveError.system { () throws(SystemError) in try file.status(display) }
        // Equal size is the norm; a longer partial can only come from a manifest
        // that lied about this content's size, so cut it back too.
        if status.size != manifest.size {
            // Only while the name still leads to this inode: once another transfer's `finish()`
            // has taken the partial, resizing it would change a file that was already verified.
            let current = try ReceiveError.system { () throws(SystemError) in try staging.directory.statusOfEntry(named: name, display) }
            guard let current, current.device == status.device, current.inode == status.inode else {
                throw .partialTaken(fileHash: manifest.fileHash)
            }
            while ftruncate(file.rawValue, off_t(manifest.size)) != 0 {
                guard errno == EINTR else { throw .system(SystemError.current("ftruncate", path: display)) }
            }
        }
        return IncomingFile(
            manifest: manifest, staging: staging, descriptor: file, partialName: name,
            identity: (status.device, status.inode), offsets: offsets, isNew: isNew)
    }

    /// A partial's mode while only its creator has it open, and once anyone else opened it
    /// (the sticky bit, meaningless on a regular file, as a mark every file system keeps).
    private static let exclusiveMode: mode_t = 0o600
    private static let sharedMode: mode_t = 0o1600

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

    /// The chunks whose bytes are in the partial and match their hashes,
    /// re-hashed from disk (see the type's note on resume); chunks this
    /// object already verified are not read again.
    ///
    /// Fast path: a partial this object created holds only what it wrote, so
    /// nothing is read (`finish()` checks what it wrote). Should another
    /// transfer of the same content write to it meanwhile, those chunks are
    /// not seen here — writing them again is harmless, and a later reopen
    /// finds them.
    public func verifiedChunks() throws(ReceiveError) -> ChunkBitmap {
        guard !isFinished else { throw .alreadyFinished(fileHash: manifest.fileHash) }
        if isNew { return present }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        var regions = DataRegions(descriptor: descriptor.rawValue)
        for (index, chunk) in manifest.chunks.enumerated() where !present.contains(index) {
            let start = offsets[index]
            guard regions.isData(start, end: start + UInt64(chunk.length)) else { continue }
            let hash = try ReceiveError.system { () throws(SystemError) in
                try descriptor.hash(from: start, length: UInt64(chunk.length), buffer: buffer, displayPath)
            }
            if hash == chunk.hash { present.insert(index) }
        }
        return present
    }

    /// Stores chunk `index`, checking its length and BLAKE2b-256 *before*
    /// anything is written.
    public func write(chunkAt index: Int, bytes: [UInt8]) throws(ReceiveError) {
        try write(chunkAt: index, bytes: bytes[...], verifyingNow: true)
    }

    /// Stores chunk `index` as the peer sent it: the receiving engine's way in.
    /// The length is checked now. The hash is checked now only if another
    /// transfer has this partial open too (it would otherwise trust, and could
    /// finish with, bytes it verified that we then overwrote); for a partial of
    /// our own, `finish()` proves every byte with the file hash instead.
    /// - Throws: `chunkHashMismatch` only for a shared partial; otherwise bad
    ///   bytes surface as `fileHashMismatch` from `finish()`.
    public func writeReceived(chunkAt index: Int, bytes: ArraySlice<UInt8>) throws(ReceiveError) {
        try write(chunkAt: index, bytes: bytes, verifyingNow: false)
    }

    public func writeReceived(chunkAt index: Int, bytes: [UInt8]) throws(ReceiveError) {
        try write(chunkAt: index, bytes: bytes[...], verifyingNow: false)
    }

    private func write(chunkAt index: Int, bytes: ArraySlice<UInt8>, verifyingNow: Bool) throws(ReceiveError) {
        let chunk = try writableChunk(index)
        guard bytes.count == Int(chunk.length) else {
            throw .chunkLengthMismatch(index: index, expected: chunk.length, actual: bytes.count)
        }
        let shared = try ensureStillOurPartial()
        // A chunk written a second time must be checked: the file hash computed on the way
        // in covered the first bytes, not these.
        if verifyingNow || shared || !isNew || present.contains(index) {
            guard bytes.withUnsafeBytes({ Blake2b.hash($0) }) == chunk.hash else { throw .chunkHashMismatch(index: index) }
        } else {
            everyChunkVerified = false
        }
        try store(bytes, at: index)
    }

    /// Copies chunk `index` from bytes the receiver already has, re-verifying
    /// them: the file may have changed since it was indexed.
    /// - Returns: `false`, not an error, when the source is gone, unreadable,
    ///   a symlink, or no longer holds those bytes — ask the peer instead.
    ///   Errors are for the destination side only.
    public func copyChunk(at index: Int, from source: ChunkSource) throws(ReceiveError) -> Bool {
        let chunk = try writableChunk(index)
        if present.contains(index) { return true }
        guard let bytes = readSource(source, length: chunk.length), Blake2b.hash(bytes) == chunk.hash else { return false }
        try ensureStillOurPartial()
        try store(bytes[...], at: index)
        return true
    }

    /// Ends the transfer: every chunk must be present. The partial is first
    /// renamed to a private `.staged` name (so no other transfer writes to it
    /// again), then checked against `fileHash` — a mismatch means the peer
    /// sent bytes other than its chunk hashes promised, or a chunk list that
    /// disagrees with its file hash; either way the file is deleted.
    /// Then the manifest's mtime is set and the file fsynced (data and mtime
    /// durable before the installer renames it).
    ///
    /// The file hash was computed while the chunks were written in order;
    /// only a tail that arrived out of order, was resumed or was copied before
    /// its predecessors is read back (from the page cache). That
    /// shortcut holds only for a partial this object created and nobody else
    /// opened: another transfer's manifest may claim the same file hash with a
    /// different size or chunk list, and cut or overwrite the partial. Any
    /// other partial is read back whole. Either way this proves the bytes
    /// written form the announced file, not that the disk kept them.
    public func finish() throws(ReceiveError) -> StagedFile {
        guard !isFinished else { throw .alreadyFinished(fileHash: manifest.fileHash) }
        guard present.isComplete else {
            throw .missingChunks(fileHash: manifest.fileHash, missing: present.missingCount)
        }
        try ensureStillOurPartial()
        let directory = staging.directory
        var stagedName = StagingArea.stagedName(for: manifest.fileHash)
        let display = displayPath
        var outcome = try ReceiveError.system { () throws(SystemError) in
            try NoReplaceRename.rename(partialName, in: directory, to: stagedName, in: directory, what: display)
        }
        if outcome == .destinationExists {  // a 64-bit random collision; try once more
            stagedName = StagingArea.stagedName(for: manifest.fileHash)
            outcome = try ReceiveError.system { () throws(SystemError) in
                try NoReplaceRename.rename(partialName, in: directory, to: stagedName, in: directory, what: display)
            }
            guard outcome == .renamed else { throw .system(SystemError("rename", path: display, errno: EEXIST)) }
        }
        isFinished = true
        let staged = StagedFile(
            fileHash: manifest.fileHash, size: manifest.size, modificationTimeNs: manifest.modificationTimeNs,
            staging: staging, name: stagedName)
        /// On an I/O error, give the verified chunks back to the next attempt.
        func restorePartial() {
            _ = try? NoReplaceRename.rename(stagedName, in: directory, to: partialName, in: directory, what: display)
        }
        let readBack: (size: UInt64, hash: Hash256)
        do {
            readBack = try ReceiveError.system { () throws(SystemError) in
                let size = try descriptor.status(staged.displayPath).size
                var raw = stat()
                guard fstat(descriptor.rawValue, &raw) == 0 else { throw SystemError.current("stat", path: staged.displayPath) }
                if !isNew || raw.st_mode & 0o7777 != Self.exclusiveMode {
                    fileHasher = Blake2b()
                    hashedChunkCount = 0
                    // The sticky mark has done its job; the installed file gets the plain mode.
                    guard fchmod(descriptor.rawValue, Self.exclusiveMode) == 0 else {
                        throw SystemError.current("chmod", path: staged.displayPath)
                    }
                }
                let tailStart = offsets[hashedChunkCount]
                if tailStart < size {
                    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
                    defer { buffer.deallocate() }
                    // `false` only if the file shrank under us: the size check below refuses it.
                    _ = try descriptor.feed(&fileHasher, from: tailStart, length: size - tailStart, buffer: buffer, staged.displayPath)
                }
                return (size, fileHasher.finalizeHashAndReset())
            }
        } catch {
            restorePartial()
            throw error
        }
        guard readBack.hash == manifest.fileHash, readBack.size == manifest.size else {
            try? staged.discard()
            throw .fileHashMismatch(expected: manifest.fileHash, actual: readBack.hash)
        }
        do {
            try ReceiveError.system { () throws(SystemError) in
                try setModificationTime(staged.displayPath)
                try descriptor.sync(staged.displayPath)
            }
        } catch {
            restorePartial()
            throw error
        }
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

    /// Writes a chunk the caller has checked (and `ensureStillOurPartial()` passed).
    private func store(_ bytes: ArraySlice<UInt8>, at index: Int) throws(ReceiveError) {
        let display = displayPath
        try ReceiveError.system { () throws(SystemError) in try descriptor.write(bytes, at: offsets[index], display) }
        // The fsync in `finish()` must not find the whole file still dirty: that would stall the
        // receiving session while the disk catches up. Start writing this chunk back now, in the
        // background (advisory; failures are ignored, the fsync still decides).
        _ = lfsync_start_writeback(descriptor.rawValue, Int64(offsets[index]), Int64(bytes.count))
        present.insert(index)
        if index == hashedChunkCount {
            bytes.withUnsafeBytes { fileHasher.update($0) }
            hashedChunkCount += 1
        }
    }

    /// Refuses to write once another transfer's `finish()` has taken the
    /// shared partial (see `StagingArea`): the name no longer leads to our inode.
    /// - Returns: whether another transfer has opened the partial too (its mark, see `open`).
    @discardableResult
    private func ensureStillOurPartial() throws(ReceiveError) -> Bool {
        var raw = stat()
        guard fstatat(staging.directory.rawValue, partialName, &raw, AT_SYMLINK_NOFOLLOW) == 0 else {
            if errno == ENOENT { throw .partialTaken(fileHash: manifest.fileHash) }
            throw .system(SystemError.current("fstatat", path: displayPath))
        }
        guard UInt64(raw.st_dev) == identity.device, UInt64(raw.st_ino) == identity.inode else {
            throw .partialTaken(fileHash: manifest.fileHash)
        }
        return raw.st_mode & 0o7777 != Self.exclusiveMode
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

    /// `futimens` with the manifest's mtime; access time left alone.
    private func setModificationTime(_ display: String) throws(SystemError) {
        let nanosecondsPerSecond: Int64 = 1_000_000_000
        var seconds = manifest.modificationTimeNs / nanosecondsPerSecond
        var nanoseconds = manifest.modificationTimeNs % nanosecondsPerSecond
        if nanoseconds < 0 {  // before 1970: tv_nsec must still be in 0..<1e9
            seconds -= 1
            nanoseconds += nanosecondsPerSecond
        }
        // UTIME_OMIT from <sys/stat.h>, which Swift does not import.
        let utimeOmit = (1 << 30) - 2
        var times = [timespec(tv_sec: 0, tv_nsec: utimeOmit), timespec(tv_sec: Int(seconds), tv_nsec: Int(nanoseconds))]
        guard futimens(descriptor.rawValue, &times) == 0 else { throw SystemError.current("futimens", path: display) }
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
