/// Bytes accepted by `send` but not yet taken by the kernel, in order.
///
/// Holds the callers' arrays as they are (no copying into a ring buffer): the partly written
/// head is tracked by an offset, and `write(to:)` hands up to 64 buffers to one `sendmsg`.
struct OutboundQueue: Sendable {
    private var chunks: [[UInt8]] = []
    private var head = 0
    private var headOffset = 0
    private(set) var byteCount = 0

    package var isEmpty: Bool { byteCount == 0 }

    package mutating func append(_ bytes: [UInt8], skipping offset: Int = 0) {
        guard offset < bytes.count else { return }
        if chunks.isEmpty || head == chunks.count {
            chunks.removeAll(keepingCapacity: true)
            head = 0
            headOffset = offset
        } else if offset > 0 {
            // Only the first write of an otherwise empty queue can be partial.
            assertionFailure("partial append to a non-empty queue")
        }
        chunks.append(bytes)
        byteCount += bytes.count - offset
    }

    /// Writes as much as the socket takes right now.
    package mutating func write(to fd: Int32) -> SocketIO.WriteResult {
        var total = 0
        while !isEmpty {
            switch SocketIO.write(fd, chunks[head...], firstOffset: headOffset) {
            case .wrote(let count):
                total += count
                consume(count)
            case .wouldBlock:
                return total > 0 ? .wrote(total) : .wouldBlock
            case .failed(let error):
                return .failed(error)
            }
        }
        return .wrote(total)
    }

    package mutating func removeAll() {
        chunks = []
        head = 0
        headOffset = 0
        byteCount = 0
    }

    private mutating func consume(_ count: Int) {
        var remaining = count
        byteCount -= count
        while remaining > 0 {
            let available = chunks[head].count - headOffset
            if remaining < available {
                headOffset += remaining
                return
            }
            remaining -= available
            // Release the array now: a finished 1 MiB chunk should not wait for compaction.
            chunks[head] = []
            head += 1
            headOffset = 0
        }
        if head == chunks.count {
            chunks.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64, head * 2 >= chunks.count {
            chunks.removeFirst(head)
            head = 0
        }
    }
}
