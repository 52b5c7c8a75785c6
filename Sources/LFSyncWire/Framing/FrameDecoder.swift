import LFSyncContent

/// Reassembles frames from decrypted Noise plaintexts, in the manner of
/// swift-nio's `LengthFieldBasedFrameDecoder`: `append` what arrives, then call
/// `nextFrame()` until it returns nil.
///
/// Memory is bounded by the frame limit: the declared length is checked the
/// moment the five header bytes are complete — before any payload byte is
/// taken or any room is made for it — so a peer claiming a 4 GiB frame is
/// refused after 5 bytes. (The caller must drain frames after each `append`;
/// the decoder itself never holds more than one incomplete frame plus what was
/// appended since the last drain.)
///
/// Each frame's payload is assembled in an array of its own, sized from the
/// header, which then *is* the frame handed out: a byte is copied into place
/// once (or decrypted straight into place, see `appendInPlace`), never moved
/// again. After an error the decoder keeps throwing it: the stream is out of
/// sync and the connection has to go.
package struct FrameDecoder: Sendable {
    /// Large enough for a Chunk frame carrying the largest chunk any peer may
    /// send (`ChunkerConfiguration.absoluteMaxChunkSize`, 16 MiB) plus its
    /// header fields, with room to spare.
    package static let defaultMaxFrameLength = Int(ChunkerConfiguration.absoluteMaxChunkSize) + 64 * 1024

    /// Checked against each header as it completes: lowering it applies from
    /// the next frame (before consent a channel accepts only small frames).
    package var maxFrameLength: Int {
        didSet { precondition(maxFrameLength >= 0 && maxFrameLength <= Int(UInt32.max)) }
    }
    /// The next frame's header bytes while fewer than five have arrived.
    private var header: [UInt8] = []
    /// The frame whose header is in and whose payload is arriving.
    private var pending: PendingFrame?
    /// Complete frames not yet returned, in order, from `readyIndex` on.
    private var ready: [Frame] = []
    private var readyIndex = 0
    private var failure: FrameError?

    /// Bytes received but not yet returned as frames (headers already parsed
    /// excepted).
    package private(set) var bufferedByteCount = 0

    /// True when a frame has begun (even just its header) and is not yet
    /// returned: the end of the stream now means it was cut short.
    package var hasPartialFrame: Bool { bufferedByteCount > 0 || pending != nil || !header.isEmpty }

    /// The frame whose header is in and whose payload is still arriving: its
    /// type, the payload bytes in and those still missing. Nil between frames
    /// (or while a header is incomplete). A shared segment may only complete a
    /// Chunk frame, and the channel checks that here.
    package var frameUnderWay: (type: UInt8, filled: Int, missing: Int)? {
        guard header.isEmpty, let pending else { return nil }
        return (pending.type, pending.filled, pending.missing)
    }

    private struct PendingFrame: Sendable {
        var type: UInt8
        /// Already the payload's full length; bytes from `filled` on are not written yet.
        var payload: [UInt8]
        var filled = 0

        var missing: Int { payload.count - filled }
    }

    package init(maxFrameLength: Int = FrameDecoder.defaultMaxFrameLength) {
        precondition(maxFrameLength >= 0 && maxFrameLength <= Int(UInt32.max))
        self.maxFrameLength = maxFrameLength
        header.reserveCapacity(Frame.headerLength)
    }

    /// Adds received plaintext; throws at once if it completes a header that
    /// declares an oversized frame.
    package mutating func append(_ bytes: some Collection<UInt8>) throws(FrameError) {
        if let failure { throw failure }
        let contiguous: Result<Void, FrameError>? = bytes.withContiguousStorageIfAvailable { buffer in
            do throws(FrameError) {
                try consume(UnsafeRawBufferPointer(buffer))
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        if let contiguous { return try contiguous.get() }
        let copy = Array(bytes)
        let result: Result<Void, FrameError> = copy.withUnsafeBytes { buffer in
            do throws(FrameError) {
                try consume(buffer)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try result.get()
    }

    /// Appends `count` bytes written by `write` straight into the payload of the
    /// frame being assembled — how the channel decrypts a Noise message into
    /// place — if that frame still lacks at least `count` bytes. Otherwise
    /// (no frame under way, or the bytes would cross into the next frame)
    /// returns false without calling `write`: use `append` instead. If `write`
    /// throws, nothing is appended.
    package mutating func appendInPlace<E: Error>(
        count: Int, _ write: (UnsafeMutableRawBufferPointer) throws(E) -> Void
    ) throws(E) -> Bool {
        guard failure == nil, count > 0, var frame = pending, frame.missing >= count else { return false }
        pending = nil  // so the payload array is not shared while we write into it
        let start = frame.filled
        let outcome: Result<Void, E> = frame.payload.withUnsafeMutableBytes { payload in
            do throws(E) {
                try write(UnsafeMutableRawBufferPointer(rebasing: payload[start..<start + count]))
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        if case let .failure(error) = outcome {
            pending = frame
            throw error
        }
        frame.filled += count
        bufferedByteCount += count
        finishOrKeep(frame)
        return true
    }

    /// The next complete frame, or nil if more bytes are needed.
    package mutating func nextFrame() throws(FrameError) -> Frame? {
        if let failure { throw failure }
        guard readyIndex < ready.count else { return nil }
        // Swapped out, so the caller holds the only reference to the payload.
        let frame = ready[readyIndex]
        ready[readyIndex] = Frame(type: 0, payload: [])
        readyIndex += 1
        if readyIndex == ready.count {
            ready.removeAll(keepingCapacity: true)
            readyIndex = 0
        }
        bufferedByteCount -= frame.payload.count
        return frame
    }

    /// Call when the peer closed the stream: throws if it stopped mid-frame.
    package mutating func finish() throws(FrameError) {
        if let failure { throw failure }
        guard !hasPartialFrame else {
            let error = FrameError.truncatedStream(bufferedBytes: bufferedByteCount)
            failure = error
            throw error
        }
    }

    private mutating func consume(_ input: UnsafeRawBufferPointer) throws(FrameError) {
        bufferedByteCount += input.count
        var position = 0
        while position < input.count {
            if var frame = pending {
                pending = nil
                let take = min(frame.missing, input.count - position)
                let start = frame.filled
                frame.payload.withUnsafeMutableBytes { payload in
                    UnsafeMutableRawBufferPointer(rebasing: payload[start..<start + take])
                        .copyMemory(from: UnsafeRawBufferPointer(rebasing: input[position..<position + take]))
                }
                frame.filled += take
                position += take
                finishOrKeep(frame)
            } else {
                let take = min(Frame.headerLength - header.count, input.count - position)
                header.append(contentsOf: input[position..<position + take])
                position += take
                if header.count == Frame.headerLength { try startFrame() }
            }
        }
    }

    /// The five header bytes are in: check the length, then make room for exactly that payload.
    private mutating func startFrame() throws(FrameError) {
        let type = header[0]
        let length = header[1...].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        header.removeAll(keepingCapacity: true)
        guard Int(length) <= maxFrameLength else {
            let error = FrameError.frameTooLarge(length: length, limit: maxFrameLength)
            failure = error
            pending = nil
            ready = []
            readyIndex = 0
            bufferedByteCount = 0
            throw error
        }
        bufferedByteCount -= Frame.headerLength
        // Not zero-filled: every byte is written (copied or decrypted into place) before
        // `filled` passes it, and the payload is handed out only once it is all filled.
        // An empty payload is `[]`: an uninitialised array of capacity 0 writes its count into
        // the empty-array singleton every thread shares (ThreadSanitizer reports it).
        let payload = length == 0 ? [] : [UInt8](unsafeUninitializedCapacity: Int(length)) { _, initialized in initialized = Int(length) }
        finishOrKeep(PendingFrame(type: type, payload: payload))
    }

    private mutating func finishOrKeep(_ frame: PendingFrame) {
        if frame.missing == 0 {
            ready.append(Frame(type: frame.type, payload: frame.payload))
        } else {
            pending = frame
        }
    }
}
