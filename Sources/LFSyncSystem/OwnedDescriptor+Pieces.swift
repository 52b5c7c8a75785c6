extension OwnedDescriptor {
    /// Reads `length` bytes from `offset` through `buffer`, one piece at a time, and
    /// hands each piece to `body`; `false` if the file ends first. Memory stays at
    /// the buffer's size whatever the file's.
    package func readPieces(
        from offset: UInt64, length: UInt64, buffer: UnsafeMutableRawBufferPointer, _ what: String,
        _ body: (UnsafeRawBufferPointer) -> Void
    ) throws(SystemError) -> Bool {
        var position = offset
        var remaining = length
        while remaining > 0 {
            let want = Int(min(UInt64(buffer.count), remaining))
            let slice = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<want])
            let got = try read(into: slice, at: position, what)
            guard got == want else { return false }
            body(UnsafeRawBufferPointer(slice))
            position += UInt64(got)
            remaining -= UInt64(got)
        }
        return true
    }
}
