/// Reassembles frames from decrypted Noise plaintexts, in the manner of
/// swift-nio's `LengthFieldBasedFrameDecoder`: `append` what arrives, then call
/// `nextFrame()` until it returns nil.
///
/// Memory is bounded by the frame limit: the declared length is checked the
/// moment the five header bytes are complete — before the payload is waited
/// for or any room is reserved for it — so a peer claiming a 4 GiB frame is
/// refused after 5 bytes. (The caller must drain frames after each `append`;
/// the decoder itself never holds more than one incomplete frame plus what was
/// appended since the last drain.)
///
/// Buffering keeps a read index into one array and compacts only when the
/// consumed prefix outweighs the rest, so feeding byte by byte or in odd
/// splits stays linear. After an error the decoder keeps throwing it: the
/// stream is out of sync and the connection has to go.
public struct FrameDecoder: Sendable {
    /// Large enough for a Chunk frame carrying the largest chunk any peer may
    /// send (`ChunkerConfiguration.absoluteMaxChunkSize`, 16 MiB) plus its
    /// header fields, with room to spare.
    public static let defaultMaxFrameLength = Int(ChunkerConfiguration.absoluteMaxChunkSize) + 64 * 1024

    /// A drained buffer keeps its capacity up to this size — enough for a
    /// frame carrying a default-maximum (1 MiB) chunk, so steady streaming
    /// reuses one allocation — and releases anything larger (a rare big frame)
    /// instead of holding it for the connection's lifetime.
    static let retainedCapacity = 2 << 20

    public let maxFrameLength: Int
    private var buffer: [UInt8] = []
    private var readIndex = 0
    /// The header of the frame being assembled, once its five bytes are in.
    private var pendingType: UInt8 = 0
    private var pendingLength: Int?
    private var failure: FrameError?

    public init(maxFrameLength: Int = FrameDecoder.defaultMaxFrameLength) {
        precondition(maxFrameLength >= 0 && maxFrameLength <= Int(UInt32.max))
        self.maxFrameLength = maxFrameLength
    }

    /// Bytes received but not yet returned as frames.
    public var bufferedByteCount: Int { buffer.count - readIndex }

    /// Adds received plaintext; throws at once if it completes a header that
    /// declares an oversized frame.
    public mutating func append(_ bytes: some Collection<UInt8>) throws(FrameError) {
        if let failure { throw failure }
        buffer.append(contentsOf: bytes)
        try parseHeaderIfPossible()
    }

    /// The next complete frame, or nil if more bytes are needed.
    public mutating func nextFrame() throws(FrameError) -> Frame? {
        if let failure { throw failure }
        try parseHeaderIfPossible()
        guard let length = pendingLength, bufferedByteCount >= length else { return nil }
        let payload = Array(buffer[readIndex..<readIndex + length])
        readIndex += length
        pendingLength = nil
        let frame = Frame(type: pendingType, payload: payload)
        compactIfWorthwhile()
        // Validate the following header now, so an oversized one is refused
        // even if the caller stops pulling after this frame.
        try parseHeaderIfPossible()
        return frame
    }

    /// Call when the peer closed the stream: throws if it stopped mid-frame.
    public mutating func finish() throws(FrameError) {
        if let failure { throw failure }
        guard bufferedByteCount == 0 else {
            let error = FrameError.truncatedStream(bufferedBytes: bufferedByteCount)
            failure = error
            throw error
        }
    }

    private mutating func parseHeaderIfPossible() throws(FrameError) {
        guard pendingLength == nil, bufferedByteCount >= Frame.headerLength else { return }
        let type = buffer[readIndex]
        var length: UInt32 = 0
        for index in readIndex + 1..<readIndex + Frame.headerLength {
            length = length << 8 | UInt32(buffer[index])
        }
        guard Int(length) <= maxFrameLength else {
            let error = FrameError.frameTooLarge(length: length, limit: maxFrameLength)
            failure = error
            buffer = []
            readIndex = 0
            throw error
        }
        readIndex += Frame.headerLength
        pendingType = type
        pendingLength = Int(length)
        // A frame spanning many Noise messages: make room once for all of it
        // (the length is validated, so this is bounded) instead of regrowing.
        let missing = Int(length) - bufferedByteCount
        if missing > 0 {
            compact()
            buffer.reserveCapacity(buffer.count + missing)
        }
    }

    private mutating func compactIfWorthwhile() {
        if readIndex == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= Self.retainedCapacity)
            readIndex = 0
        } else if readIndex >= 4096, readIndex >= buffer.count - readIndex {
            compact()
        }
    }

    /// Moves the unread bytes to the front. Only done when the consumed prefix
    /// is at least as large as what is moved, or once per large frame, so the
    /// total cost stays linear in the bytes received.
    private mutating func compact() {
        guard readIndex > 0 else { return }
        buffer.removeSubrange(0..<readIndex)
        readIndex = 0
    }
}
