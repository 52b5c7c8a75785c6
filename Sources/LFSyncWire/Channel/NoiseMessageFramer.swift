import LFSyncCrypto

/// Noise messages on a byte stream: each is preceded by its length as a
/// 16-bit big-endian integer (the framing the Noise spec suggests for TCP).
/// The 16-bit prefix itself caps a message at 65535 bytes, so no hostile
/// length can make this buffer more than one message ahead.
///
/// Received arrays are kept as they came, not copied into one buffer: a
/// message that lies inside one is handed out where it lies, and only a
/// message straddling two arrays is gathered (at most 64 KiB per receive).
///
/// A peer that trickles its bytes in one per TCP segment must not cost more
/// than the bytes themselves: a small receive is added to the last queued array
/// rather than kept as an array of its own (an array costs some 50 bytes of
/// heap, whatever it holds), and the bytes queued are counted as they come, so
/// asking whether a segment is complete never walks the queue.
package struct NoiseMessageFramer: Sendable {
    /// Receives smaller than this join the last queued array when it is small too.
    static let coalescingLimit = 16 * 1024

    /// The array being read, from `readIndex` on.
    private var buffer: [UInt8] = []
    private var readIndex = 0
    /// Arrays received after `buffer`, in order (small ones joined).
    private var queued: [[UInt8]] = []
    private var queuedIndex = 0
    /// Bytes in `queued[queuedIndex...]`.
    private var queuedByteCount = 0

    /// Arrays held beyond the one being read: bounded by the bytes held over
    /// `coalescingLimit`, however those bytes were cut into receives.
    package var queuedArrayCount: Int { queued.count - queuedIndex }

    package init() {}

    package static func prefixed(_ message: [UInt8], into output: inout [UInt8]) {
        precondition(message.count <= Noise.maxMessageLength)
        output.append(UInt8(message.count >> 8))
        output.append(UInt8(message.count & 0xFF))
        output.append(contentsOf: message)
    }

    package mutating func append(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        if readIndex == buffer.count, queuedIndex == queued.count {
            buffer = bytes
            readIndex = 0
            queued.removeAll(keepingCapacity: true)
            queuedIndex = 0
        } else {
            queuedByteCount += bytes.count
            if bytes.count < Self.coalescingLimit, queuedIndex < queued.count, queued[queued.count - 1].count < Self.coalescingLimit {
                queued[queued.count - 1].append(contentsOf: bytes)
            } else {
                queued.append(bytes)
            }
        }
    }

    /// Takes the next queued array out of the queue.
    private mutating func dequeue() -> [UInt8] {
        let next = queued[queuedIndex]
        queued[queuedIndex] = []
        queuedIndex += 1
        queuedByteCount -= next.count
        if queuedIndex == queued.count {
            queued.removeAll(keepingCapacity: true)
            queuedIndex = 0
        }
        return next
    }

    /// The next complete message (a copy), or nil when more bytes are needed.
    package mutating func next() -> [UInt8]? {
        withNextMessage { Array($0) }
    }

    /// Calls `body` with the next complete message in place (no copy, unless
    /// it straddles two received arrays), or returns nil when more bytes are
    /// needed. The pointer is valid only during the call.
    package mutating func withNextMessage<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R? {
        while true {
            let unread = buffer.count - readIndex
            if unread >= 2 {
                let length = Int(buffer[readIndex]) << 8 | Int(buffer[readIndex + 1])
                if unread - 2 >= length {
                    let start = readIndex + 2
                    readIndex = start + length
                    return try Self.call(body, with: buffer, start..<start + length)
                }
            }
            guard queuedIndex < queued.count else { return nil }
            let next = dequeue()
            if unread == 0 {
                buffer = next
                readIndex = 0
                continue
            }
            // A message straddles the end of `buffer`: gather it (and nothing more) from `next`.
            // Taken out of `buffer` (so appending does not copy it) and trimmed only once: a
            // message trickling in over many receives is appended to, never copied again.
            var gathered = buffer
            buffer = []
            if readIndex > 0 { gathered.removeSubrange(0..<readIndex) }
            readIndex = 0
            var taken = 0
            if gathered.count < 2 {
                taken = min(2 - gathered.count, next.count)
                gathered.append(contentsOf: next[0..<taken])
            }
            if gathered.count >= 2 {
                let total = 2 + (Int(gathered[0]) << 8 | Int(gathered[1]))
                gathered.reserveCapacity(total)
                let more = min(total - gathered.count, next.count - taken)
                gathered.append(contentsOf: next[taken..<taken + more])
                taken += more
            }
            if taken == next.count {
                buffer = gathered
                readIndex = 0
            } else {
                // `gathered` is now exactly one whole message: hand it out, then read on in `next`.
                buffer = next
                readIndex = taken
                return try Self.call(body, with: gathered, 2..<gathered.count)
            }
        }
    }

    /// Calls `body` with the next `count` bytes of the stream as they are — a
    /// shared segment's sealed bytes, which no length prefix precedes — or
    /// returns nil when fewer have arrived. In place when one received array
    /// holds them all; otherwise gathered once, when all have come, so a segment
    /// trickling in over many receives is copied once, not once per receive.
    /// The caller bounds `count` (by its frame limit) before asking.
    package mutating func withNextBytes<R, E: Error>(_ count: Int, _ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R? {
        let unread = buffer.count - readIndex
        if unread >= count {
            let start = readIndex
            readIndex = start + count
            return try Self.call(body, with: buffer, start..<start + count)
        }
        guard unread + queuedByteCount >= count else { return nil }
        var gathered: [UInt8] = []
        gathered.reserveCapacity(count)
        gathered.append(contentsOf: buffer[readIndex...])
        buffer = []
        readIndex = 0
        while gathered.count < count {
            let next = dequeue()
            let take = min(count - gathered.count, next.count)
            gathered.append(contentsOf: next[0..<take])
            if take < next.count {
                buffer = next
                readIndex = take
            }
        }
        return try Self.call(body, with: gathered, 0..<count)
    }

    private static func call<R, E: Error>(
        _ body: (UnsafeRawBufferPointer) throws(E) -> R, with bytes: [UInt8], _ range: Range<Int>
    ) throws(E) -> R {
        let result: Result<R, E> = bytes.withUnsafeBytes { all in
            do throws(E) {
                return .success(try body(UnsafeRawBufferPointer(rebasing: all[range])))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// True when a partial message is buffered (an EOF now is a truncation).
    package var hasPartialMessage: Bool { readIndex < buffer.count || queuedIndex < queued.count }
}
