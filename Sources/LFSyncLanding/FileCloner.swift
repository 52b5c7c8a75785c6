#if canImport(Glibc)
import Glibc
#endif
internal import CLinux
import LFSyncSystem
import LFSyncStore

/// Copies a whole file into another, as cheaply as the file system allows.
///
/// The same content at several paths is received once and then copied on the
/// receiver. Where the file system can share extents (btrfs, XFS, bcachefs)
/// the copy is a reflink (`FICLONE`): no data is written and the copies still
/// part ways on the first edit — never a hard link, which would make editing
/// one copy change the other. Elsewhere the kernel copies in place
/// (`copy_file_range`), and where even that is refused, a plain read/write
/// loop does.
enum FileCloner {
    package enum Method: Equatable, Sendable {
        case reflink, kernelCopy, readWrite
    }

    /// Copies all of `source` (from offset 0, `length` bytes) into the empty `destination`.
    /// - Returns: how it was done (for tests and diagnostics).
    @discardableResult
    package static func copy(from source: OwnedDescriptor, to destination: OwnedDescriptor, length: UInt64, _ what: String) throws(SystemError) -> Method {
        if length == 0 { return .reflink }
        if lfsync_clone_file(destination.rawValue, source.rawValue) == 0 { return .reflink }
        // EOPNOTSUPP/ENOTTY: no reflinks here; EXDEV: another file system; EINVAL: unaligned or unsupported.
        guard [EOPNOTSUPP, ENOTTY, EXDEV, EINVAL, ENOSYS, EPERM, ENOTSUP].contains(errno) else {
            throw SystemError.current("clone", path: what)
        }
        if try kernelCopy(from: source, to: destination, length: length, what) { return .kernelCopy }
        try readWriteCopy(from: source, to: destination, length: length, what)
        return .readWrite
    }

    /// `copy_file_range` to the end; `false` when the kernel will not do it at all here.
    private static func kernelCopy(from source: OwnedDescriptor, to destination: OwnedDescriptor, length: UInt64, _ what: String) throws(SystemError) -> Bool {
        var inOffset: Int = 0, outOffset: Int = 0
        var remaining = length
        while remaining > 0 {
            let result = copy_file_range(source.rawValue, &inOffset, destination.rawValue, &outOffset, Int(min(remaining, 1 << 30)), 0)
            if result < 0 {
                if errno == EINTR { continue }
                if inOffset == 0, [ENOSYS, EXDEV, EINVAL, EOPNOTSUPP, ENOTSUP].contains(errno) { return false }
                throw SystemError.current("copy_file_range", path: what)
            }
            // The source ended early: it changed under us, which a staged file never does.
            guard result > 0 else { throw SystemError("copy_file_range", path: what, errno: EIO) }
            remaining -= UInt64(result)
        }
        return true
    }

    package static func readWriteCopy(from input: OwnedDescriptor, to output: OwnedDescriptor, length: UInt64, _ what: String) throws(SystemError) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        var offset: UInt64 = 0
        while offset < length {
            let want = Int(min(UInt64(buffer.count), length - offset))
            let slice = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<want])
            let got = try input.read(into: slice, at: offset, what)
            guard got == want else { throw SystemError("read", path: what, errno: EIO) }
            try output.write(UnsafeRawBufferPointer(slice), at: offset, what)
            offset += UInt64(got)
        }
    }
}
