#if canImport(Glibc)
import Glibc
#endif

/// The name of an entry `readdir` returned, read where it lies.
///
/// Why not `withUnsafeBytes(of: entry.pointee.d_name)`: that copies the whole 256-byte
/// `d_name` array, but the C library gives each entry only `d_reclen` bytes of its
/// buffer, so for the last entries of a buffer the copy reads past its end. AddressSanitizer
/// (`make test-asan`) reported it as a heap-buffer-overflow in the staging clean-up; the
/// scanner's walk had the same copy.
package enum DirectoryEntryName {
    package static func bytes(of entry: UnsafePointer<dirent>) -> [UInt8] {
        let offset = MemoryLayout<dirent>.offset(of: \dirent.d_name) ?? 19
        let room = max(0, Int(entry.pointee.d_reclen) - offset)
        let start = UnsafeRawPointer(entry).advanced(by: offset).assumingMemoryBound(to: CChar.self)
        let length = strnlen(start, room)
        return Array(UnsafeRawBufferPointer(start: start, count: length))
    }
}
