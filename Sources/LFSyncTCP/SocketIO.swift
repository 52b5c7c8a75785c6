#if canImport(Glibc)
import Glibc
#endif
import LFSyncTransport

/// The non-blocking system calls of an established socket, with `EINTR` retried and errno
/// mapped, so the connection logic reads as states rather than C.
enum SocketIO {
    package enum ReadResult: Sendable {
        case bytes([UInt8])
        case endOfStream
        case wouldBlock
        case failed(TransportError)
    }

    package enum WriteResult: Sendable {
        /// `count` bytes went to the kernel (maybe fewer than offered).
        case wrote(Int)
        case wouldBlock
        case failed(TransportError)
    }

    /// Reads up to `maximum` bytes straight into a new array (no zero-filling, no copy for
    /// big reads). A small read is copied into a right-sized array so a caller that keeps
    /// many small messages does not pin a chunk-sized allocation for each.
    package static func read(_ fd: Int32, maximum: Int) -> ReadResult {
        var code: Int32 = 0
        let bytes = [UInt8](unsafeUninitializedCapacity: maximum) { buffer, count in
            count = 0
            while true {
                let result = Glibc.read(fd, buffer.baseAddress, maximum)
                if result >= 0 {
                    count = result
                    return
                }
                code = errno
                if code != EINTR { return }
            }
        }
        if code == EAGAIN || code == EWOULDBLOCK { return .wouldBlock }
        if code != 0 { return .failed(TransportError(errno: code, operation: "read")) }
        if bytes.isEmpty { return .endOfStream }
        if bytes.count < maximum / 4 { return .bytes(Array(bytes[...])) }
        return .bytes(bytes)
    }

    /// Reads and discards whatever is readable (a closing socket draining its peer).
    package static func discard(_ fd: Int32) -> ReadResult {
        withUnsafeTemporaryAllocation(byteCount: 64 * 1024, alignment: 16) { buffer in
            while true {
                let result = Glibc.read(fd, buffer.baseAddress, buffer.count)
                if result > 0 { continue }
                if result == 0 { return .endOfStream }
                let code = errno
                if code == EINTR { continue }
                if code == EAGAIN || code == EWOULDBLOCK { return .wouldBlock }
                return .failed(TransportError(errno: code, operation: "read"))
            }
        }
    }

    /// One `send` of `bytes[offset...]` (MSG_NOSIGNAL: a closed peer is an EPIPE error, never
    /// a process-killing SIGPIPE, without touching the process-wide signal disposition).
    package static func write(_ fd: Int32, _ bytes: [UInt8], from offset: Int) -> WriteResult {
        bytes.withUnsafeBytes { raw in
            guard let base = raw.baseAddress, offset < raw.count else { return .wrote(0) }
            while true {
                let result = Glibc.send(fd, base + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                if result >= 0 { return .wrote(result) }
                let code = errno
                if code == EINTR { continue }
                if code == EAGAIN || code == EWOULDBLOCK { return .wouldBlock }
                return .failed(TransportError(errno: code, operation: "send"))
            }
        }
    }

    /// One gathering `sendmsg` of up to `maximumVectors` queued buffers, the first starting
    /// at `firstOffset`: many small queued frames leave in one system call, without copying
    /// them together first.
    package static func write(_ fd: Int32, _ chunks: ArraySlice<[UInt8]>, firstOffset: Int, maximumVectors: Int = 64) -> WriteResult {
        var vectors: [iovec] = []
        vectors.reserveCapacity(min(chunks.count, maximumVectors))
        // Each buffer's address is only valid inside its `withUnsafeBytes`, so the vector is
        // built by nesting one closure per buffer (bounded by `maximumVectors`).
        func gather(_ index: Int) -> WriteResult {
            guard index < chunks.endIndex, vectors.count < maximumVectors else {
                return vectors.withUnsafeMutableBufferPointer { vectorBuffer in
                    var message = msghdr()
                    message.msg_iov = vectorBuffer.baseAddress
                    message.msg_iovlen = vectorBuffer.count
                    while true {
                        let result = Glibc.sendmsg(fd, &message, Int32(MSG_NOSIGNAL))
                        if result >= 0 { return .wrote(result) }
                        let code = errno
                        if code == EINTR { continue }
                        if code == EAGAIN || code == EWOULDBLOCK { return .wouldBlock }
                        return .failed(TransportError(errno: code, operation: "sendmsg"))
                    }
                }
            }
            return chunks[index].withUnsafeBytes { raw in
                let skip = index == chunks.startIndex ? firstOffset : 0
                if let base = raw.baseAddress, skip < raw.count {
                    vectors.append(iovec(iov_base: UnsafeMutableRawPointer(mutating: base + skip), iov_len: raw.count - skip))
                }
                return gather(index + 1)
            }
        }
        return gather(chunks.startIndex)
    }

    /// Options of every connected socket: no Nagle delay (small control messages must not
    /// wait behind a timer), and a dead peer detected in seconds rather than the kernel's
    /// default ~15 minutes. Data unacknowledged for `deadPeerSeconds` fails the connection
    /// (`TCP_USER_TIMEOUT`, e.g. a cable pulled mid-transfer); an idle connection is probed
    /// by keepalives so a vanished peer is noticed even when nothing is being sent.
    package static func configureConnected(_ fd: Int32, deadPeerSeconds: Int32 = 20) {
        _ = setOption(fd, level: Int32(IPPROTO_TCP), name: TCP_NODELAY, value: 1)
        _ = setOption(fd, level: Int32(IPPROTO_TCP), name: 18 /* TCP_USER_TIMEOUT, milliseconds */, value: deadPeerSeconds * 1000)
        _ = setOption(fd, level: SOL_SOCKET, name: SO_KEEPALIVE, value: 1)
        _ = setOption(fd, level: Int32(IPPROTO_TCP), name: TCP_KEEPIDLE, value: 10)
        _ = setOption(fd, level: Int32(IPPROTO_TCP), name: TCP_KEEPINTVL, value: 5)
        _ = setOption(fd, level: Int32(IPPROTO_TCP), name: TCP_KEEPCNT, value: 2)
    }

    package static func setOption(_ fd: Int32, level: Int32, name: Int32, value: Int32) -> Bool {
        var value = value
        return setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size)) == 0
    }

    /// Makes the next `close` send a reset instead of a FIN: used when queued data could not
    /// be flushed, so the peer learns the stream is incomplete instead of seeing a clean end.
    package static func setAbortiveClose(_ fd: Int32) {
        var option = linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
    }

    /// The pending error of a socket (`SO_ERROR`), 0 when none: how a non-blocking connect
    /// reports its outcome.
    package static func pendingError(_ fd: Int32) -> Int32 {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &value, &length) == 0 else { return errno }
        return value
    }
}
