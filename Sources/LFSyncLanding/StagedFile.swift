#if canImport(Glibc)
import Glibc
#endif
import LFSyncCrypto
import LFSyncSystem
import LFSyncStore

/// A complete, hash-verified file in the staging area, waiting for
/// `LibraryInstaller` to move it into the library. Its staging name is
/// private to it (see `StagingArea`).
///
/// One verified content may be needed at several paths: `duplicate()` makes
/// another staged file of the same bytes (a reflink where the file system has
/// them), so the content crosses the wire once. Each copy gets its own
/// modification time and is made durable by `prepareForInstall`.
package struct StagedFile: Sendable, CustomStringConvertible {
    package let fileHash: Hash256
    package let size: UInt64
    /// See `EmbeddedIdentifier`.
    package let embeddedIdentifier: EmbeddedIdentifier
    package let staging: StagingArea
    /// Name inside the staging directory.
    package let name: String
    /// The file that was verified, when known (nil for a `duplicate()`): the
    /// installer then need not look the name up before its rename, and
    /// checks after it that the name led to this very file.
    let identity: FileIdentity?

    package init(fileHash: Hash256, size: UInt64, embeddedIdentifier: EmbeddedIdentifier = .unknown,
         staging: StagingArea, name: String) {
        self.init(fileHash: fileHash, size: size, embeddedIdentifier: embeddedIdentifier,
                  staging: staging, name: name, identity: nil)
    }

    init(fileHash: Hash256, size: UInt64, embeddedIdentifier: EmbeddedIdentifier,
         staging: StagingArea, name: String, identity: FileIdentity?) {
        self.fileHash = fileHash
        self.size = size
        self.embeddedIdentifier = embeddedIdentifier
        self.staging = staging
        self.name = name
        self.identity = identity
    }

    package var displayPath: String { StagingArea.displayPath(of: name) }

    package var description: String { "staged \(fileHash.shortHex) (\(size) bytes)" }

    /// Deletes the staged copy (an asset the engine gave up on). Already gone is fine.
    /// When the verified file is known, only it is unlinked: whatever else
    /// stands under the name is left alone.
    package func discard() throws(ReceiveError) {
        if let identity {
            let current = try ReceiveError.system { () throws(SystemError) in try staging.directory.statusOfEntry(named: name, displayPath) }
            guard let current else { return }
            guard identity.isSame(as: current) else { return }
        }
        guard unlinkat(staging.directory.rawValue, name, 0) == 0 || errno == ENOENT else {
            throw .system(SystemError.current("unlink", path: displayPath))
        }
    }

    /// Another staged file with the same bytes, under a name of its own. The
    /// bytes come from this verified file inside our private staging
    /// directory, so they need no second check.
    package func duplicate() throws(ReceiveError) -> StagedFile {
        let directory = staging.directory
        let copyName = staging.stagedName(for: fileHash)
        let copy = StagedFile(fileHash: fileHash, size: size,
                              embeddedIdentifier: embeddedIdentifier, staging: staging, name: copyName)
        try ReceiveError.system { () throws(SystemError) in
            let source = try open(name, flags: O_RDONLY, displayPath)
            let created = openat(directory.rawValue, copyName, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            guard created >= 0 else { throw SystemError.current("create", path: copy.displayPath) }
            let destination = OwnedDescriptor(taking: created)
            do throws(SystemError) {
                try FileCloner.copy(from: source, to: destination, length: size, copy.displayPath)
            } catch {
                unlinkat(directory.rawValue, copyName, 0)
                throw error
            }
        }
        return copy
    }

    /// Gives the file its mode and modification time and makes data and time
    /// durable (fsync) before the installer renames it into place. With
    /// `syncing` false the caller makes them durable itself, many files at
    /// once (`StagingArea.syncFileSystem`), before any rename. Until here the
    /// file is 0600, like everything in staging; the mode is set last, on a
    /// name in our own private staging directory.
    package func prepareForInstall(modificationTimeNs: Int64, mode: mode_t = 0o600, syncing: Bool = true) throws(ReceiveError) {
        try ReceiveError.system { () throws(SystemError) in
            if syncing {
                let file = try open(name, flags: O_RDONLY, displayPath)
                try Self.setModificationTime(of: file, to: modificationTimeNs, displayPath)
                if mode != IncomingFile.fileMode, fchmod(file.rawValue, mode) != 0 { throw SystemError.current("chmod", path: displayPath) }
                try file.sync(displayPath)
            } else {
                try Self.setModificationTime(ofEntry: name, in: staging.directory, to: modificationTimeNs, displayPath)
                // fchmodat follows a symlink, but nothing but lfsync writes names into the
                // staging directory (0700, ours: `StagingArea` checks) and this one it made.
                if mode != IncomingFile.fileMode, fchmodat(staging.directory.rawValue, name, mode, 0) != 0 {
                    throw SystemError.current("chmod", path: displayPath)
                }
            }
        }
    }

    /// Whether `other`, open for reading, holds exactly this staged file's bytes: compared
    /// byte for byte, so the answer does not depend on how either was cut into chunks.
    package func hasSameBytes(as other: OwnedDescriptor, _ what: String) throws(SystemError) -> Bool {
        let mine = try open(name, flags: O_RDONLY, displayPath)
        let bufferSize = Int(min(size, 1 << 20))
        guard bufferSize > 0 else { return true }
        let ours = UnsafeMutableRawBufferPointer.allocate(byteCount: bufferSize, alignment: 16)
        let theirs = UnsafeMutableRawBufferPointer.allocate(byteCount: bufferSize, alignment: 16)
        defer {
            ours.deallocate()
            theirs.deallocate()
        }
        var offset: UInt64 = 0
        while offset < size {
            let want = Int(min(UInt64(bufferSize), size - offset))
            let got = try mine.read(into: UnsafeMutableRawBufferPointer(rebasing: ours[0..<want]), at: offset, displayPath)
            guard got == want, try other.read(into: UnsafeMutableRawBufferPointer(rebasing: theirs[0..<want]), at: offset, what) == want,
                  UnsafeRawBufferPointer(rebasing: ours[0..<want]).elementsEqual(UnsafeRawBufferPointer(rebasing: theirs[0..<want]))
            else { return false }
            offset += UInt64(want)
        }
        return true
    }

    private func open(_ name: String, flags: Int32, _ what: String) throws(SystemError) -> OwnedDescriptor {
        let fd = openat(staging.directory.rawValue, name, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw SystemError.current("open", path: what) }
        return OwnedDescriptor(taking: fd)
    }

    /// `futimens` with the given mtime; access time left alone.
    package static func setModificationTime(of file: OwnedDescriptor, to timeNs: Int64, _ what: @autoclosure () -> String) throws(SystemError) {
        let result = withTimes(timeNs) { futimens(file.rawValue, $0) }
        guard result == 0 else { throw SystemError.current("futimens", path: what()) }
    }

    /// `utimensat` by name, without opening: for lfsync's own names in the
    /// staging directory, which it never follows if they are symlinks.
    package static func setModificationTime(
        ofEntry name: String, in directory: OwnedDescriptor, to timeNs: Int64, _ what: @autoclosure () -> String
    ) throws(SystemError) {
        let result = withTimes(timeNs) { times in
            name.withCString { utimensat(directory.rawValue, $0, times, AT_SYMLINK_NOFOLLOW) }
        }
        guard result == 0 else { throw SystemError.current("utimensat", path: what()) }
    }

    /// The pair `futimens` and `utimensat` take, on the stack: once per received file.
    private static func withTimes(_ timeNs: Int64, _ body: (UnsafePointer<timespec>) -> Int32) -> Int32 {
        var times = Self.times(timeNs)
        return withUnsafePointer(to: &times) { pair in
            pair.withMemoryRebound(to: timespec.self, capacity: 2) { body($0) }
        }
    }

    /// Access time left alone, modification time `timeNs` (nanoseconds since 1970).
    private static func times(_ timeNs: Int64) -> (access: timespec, modification: timespec) {
        // UTIME_OMIT from <sys/stat.h>, which Swift does not import.
        let utimeOmit = (1 << 30) - 2
        return (timespec(tv_sec: 0, tv_nsec: utimeOmit), FileTime.timespec(timeNs))
    }
}
