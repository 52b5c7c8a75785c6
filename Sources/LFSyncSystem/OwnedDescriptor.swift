#if canImport(Glibc)
import Glibc
#endif

/// A file or directory descriptor that closes itself when the last reference
/// goes: the one type that owns a descriptor in lfsync (`ReadOnlyFile` is a
/// reader built on it).
///
/// The receiving side keeps every directory it writes into open as one of
/// these, so each later `*at` call is relative to the directory that was
/// actually checked, not to a path that could be swapped for a symlink in
/// between. Immutable, so it can be shared across tasks; the kernel serialises
/// the calls made on it.
package final class OwnedDescriptor: Sendable {
    package let rawValue: Int32

    /// Takes ownership of `rawValue`, which must be open.
    package init(taking rawValue: Int32) {
        self.rawValue = rawValue
    }

    deinit {
        close(rawValue)
    }

    package func status(_ what: @autoclosure () -> String) throws(SystemError) -> FileStatus {
        var raw = stat()
        guard fstat(rawValue, &raw) == 0 else { throw SystemError.current("fstat", path: what()) }
        return FileStatus(raw)
    }

    /// `fstatat` without following a final symlink; `nil` when nothing has that name.
    package func statusOfEntry(named name: String, _ what: @autoclosure () -> String) throws(SystemError) -> FileStatus? {
        var raw = stat()
        // `withCString`: a short name passed as a String argument would be copied to the heap.
        guard name.withCString({ fstatat(rawValue, $0, &raw, AT_SYMLINK_NOFOLLOW) }) == 0 else {
            if errno == ENOENT { return nil }
            throw SystemError.current("fstatat", path: what())
        }
        return FileStatus(raw)
    }

    package func sync(_ what: @autoclosure () -> String) throws(SystemError) {
        while fsync(rawValue) != 0 {
            guard errno == EINTR else { throw SystemError.current("fsync", path: what()) }
        }
    }

    /// Fills `buffer` from `offset`; returns fewer bytes only at end of file.
    package func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64, _ what: String) throws(SystemError) -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        var filled = 0
        while filled < buffer.count {
            let result = pread(rawValue, base + filled, buffer.count - filled, off_t(offset) + off_t(filled))
            if result < 0 {
                if errno == EINTR { continue }
                throw SystemError.current("pread", path: what)
            }
            if result == 0 { break }
            filled += result
        }
        return filled
    }

    /// Writes all of `buffer` at `offset` (`pwrite` may write less than asked).
    package func write(_ buffer: UnsafeRawBufferPointer, at offset: UInt64, _ what: @autoclosure () -> String) throws(SystemError) {
        guard let base = buffer.baseAddress else { return }
        var written = 0
        while written < buffer.count {
            let result = pwrite(rawValue, base + written, buffer.count - written, off_t(offset) + off_t(written))
            if result < 0 {
                if errno == EINTR { continue }
                throw SystemError.current("pwrite", path: what())
            }
            written += result
        }
    }

    /// `[UInt8]` convenience over `read(into:at:)`; returns exactly the bytes read.
    package func read(count: Int, at offset: UInt64, _ what: String) throws(SystemError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let result: Result<Int, SystemError> = bytes.withUnsafeMutableBytes { buffer in
            do throws(SystemError) { return .success(try read(into: buffer, at: offset, what)) } catch { return .failure(error) }
        }
        let filled = try result.get()
        if filled < count { bytes.removeSubrange(filled...) }
        return bytes
    }

    package func write(_ bytes: ArraySlice<UInt8>, at offset: UInt64, _ what: @autoclosure () -> String) throws(SystemError) {
        let result: Result<Void, SystemError> = bytes.withUnsafeBytes { buffer in
            do throws(SystemError) { return .success(try write(buffer, at: offset, what())) } catch { return .failure(error) }
        }
        try result.get()
    }
}
