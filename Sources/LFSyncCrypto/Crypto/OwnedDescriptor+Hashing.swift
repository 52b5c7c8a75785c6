import LFSyncSystem

import LFSyncSystem

/// Hashing a region of a file through its descriptor: here, above the
/// descriptor type, because BLAKE2b lives in this target.
extension OwnedDescriptor {
    /// BLAKE2b-256 of `length` bytes from `offset`, read through one reusable
    /// buffer; `nil` if the file ends first. Memory stays at the buffer's size
    /// whatever the file's.
    package func hash(from offset: UInt64, length: UInt64, buffer: UnsafeMutableRawBufferPointer, _ what: String) throws(SystemError) -> Hash256? {
        var hasher = Blake2b()
        guard try feed(&hasher, from: offset, length: length, buffer: buffer, what) else { return nil }
        return hasher.finalizeHash()
    }

    /// Feeds `length` bytes from `offset` into `hasher`; `false` if the file ended first.
    package func feed(_ hasher: inout Blake2b, from offset: UInt64, length: UInt64, buffer: UnsafeMutableRawBufferPointer, _ what: String) throws(SystemError) -> Bool {
        var position = offset
        var remaining = length
        while remaining > 0 {
            let want = Int(min(UInt64(buffer.count), remaining))
            let slice = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<want])
            let got = try read(into: slice, at: position, what)
            guard got == want else { return false }
            hasher.update(UnsafeRawBufferPointer(slice))
            position += UInt64(got)
            remaining -= UInt64(got)
        }
        return true
    }

    /// `hash(from:length:buffer:)` with a buffer of its own (at most `bufferSize` bytes).
    package func hash(from offset: UInt64, length: UInt64, bufferSize: Int = 1 << 20, _ what: String) throws(SystemError) -> Hash256? {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, Int(min(UInt64(bufferSize), length))), alignment: 16)
        defer { buffer.deallocate() }
        return try hash(from: offset, length: length, buffer: buffer, what)
    }
}
