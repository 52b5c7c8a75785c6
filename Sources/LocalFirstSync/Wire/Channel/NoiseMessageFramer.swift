/// Noise messages on a byte stream: each is preceded by its length as a
/// 16-bit big-endian integer (the framing the Noise spec suggests for TCP).
/// The 16-bit prefix itself caps a message at 65535 bytes, so no hostile
/// length can make this buffer more than one message ahead.
struct NoiseMessageFramer: Sendable {
    private var buffer: [UInt8] = []
    private var readIndex = 0

    static func prefixed(_ message: [UInt8], into output: inout [UInt8]) {
        precondition(message.count <= Noise.maxMessageLength)
        output.append(UInt8(message.count >> 8))
        output.append(UInt8(message.count & 0xFF))
        output.append(contentsOf: message)
    }

    mutating func append(_ bytes: [UInt8]) {
        if readIndex > 0, readIndex == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            readIndex = 0
        } else if readIndex > 1 << 20 {
            buffer.removeSubrange(0..<readIndex)
            readIndex = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete message (a copy), or nil when more bytes are needed.
    mutating func next() -> [UInt8]? {
        withNextMessage { Array($0) }
    }

    /// Calls `body` with the next complete message in place (no copy), or
    /// returns nil when more bytes are needed. The pointer is valid only
    /// during the call.
    mutating func withNextMessage<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R? {
        guard buffer.count - readIndex >= 2 else { return nil }
        let length = Int(buffer[readIndex]) << 8 | Int(buffer[readIndex + 1])
        guard buffer.count - readIndex - 2 >= length else { return nil }
        let start = readIndex + 2
        readIndex = start + length
        let result: Result<R, E> = buffer.withUnsafeBytes { bytes in
            do throws(E) {
                return .success(try body(UnsafeRawBufferPointer(rebasing: bytes[start..<start + length])))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// True when a partial message is buffered (an EOF now is a truncation).
    var hasPartialMessage: Bool { readIndex < buffer.count }
}
