import LFSyncCrypto
import LFSyncSystem
import LFSyncTransport

/// The receiving half: owns the receiving cipher state, the Noise message
/// reassembly and the frame decoder (whose cap bounds memory per frame).
package actor SecureChannelReader {
    private let connection: any Connection
    private var cipher: NoiseCipherState
    private var framer: NoiseMessageFramer
    private var frames = FrameDecoder()
    private var progress = FrameProgress()
    private(set) var bytesRead: UInt64 = 0
    /// Frame-stream bytes decrypted so far: where a shared segment must say it begins.
    private var streamOffset: UInt64 = 0
    private var failed: SecureChannelError?

    private let silence: SilenceWatch

    package init(connection: any Connection, cipher: NoiseCipherState, framer: NoiseMessageFramer) {
        self.connection = connection
        silence = SilenceWatch(connection: connection)
        self.cipher = cipher
        self.framer = framer
    }

    /// Whether bytes that came in with the last message (in the same read, a Noise message
    /// or a frame begun) are still waiting to be read: a peer that sent something right behind it.
    package var hasUnreadInput: Bool {
        framer.hasPartialMessage || frames.hasPartialFrame
    }

    package func limitFrames(to length: Int) {
        frames.maxFrameLength = length
    }

    /// Tests shorten the grace, so a stall shows in a second rather than in thirty.
    package func requireFrameRate(_ progress: FrameProgress) {
        self.progress = progress
    }

    package func receive() async throws(SecureChannelError) -> (message: WireMessage, frameLength: Int)? {
        if let failed { throw failed }
        do {
            return try await nextMessage()
        } catch {
            // An idle timeout only says the peer was quiet; the stream is intact, so it may be retried.
            if case .transport(.timedOut(.idle)) = error { throw error }
            failed = error
            throw error
        }
    }

    /// Whether this side announced that it accepts shared segments (PROTOCOL.md,
    /// "Shared segments"); until it has, a segment marker is a protocol error.
    private var acceptsSegments = false
    /// Where the stream stands in a shared segment: its marker is followed by a
    /// header message, and the header by the segment's sealed bytes.
    private var segment = SegmentState.none

    private enum SegmentState {
        case none
        case header
        case body(SegmentHeader)
    }

    package func acceptSegments() {
        acceptsSegments = true
    }

    /// Where a decrypted Noise message (or segment) went.
    private enum Decrypted {
        case inPlace
        case plaintext([UInt8])
        /// A segment's marker or header: nothing for the frame stream yet.
        case segmentControl
    }

    private func nextMessage() async throws(SecureChannelError) -> (message: WireMessage, frameLength: Int)? {
        while true {
            let frame: Frame?
            do { frame = try frames.nextFrame() } catch { throw .frame(error) }
            if let frame {
                progress.reset()
                do { return (try WireMessage(frame: frame), Frame.headerLength + frame.payload.count) } catch { throw .wire(error) }
            }
            let decrypted = try decryptNext()
            switch decrypted {
            case .inPlace, .segmentControl:
                continue
            case let .plaintext(plaintext):
                do { try frames.append(plaintext) } catch { throw .frame(error) }
                continue
            case nil:
                break
            }
            let inFlight: Bool
            if case .none = segment { inFlight = framer.hasPartialMessage || frames.hasPartialFrame } else { inFlight = true }
            let started = ContinuousClock.now
            if inFlight { silence.begin(allowance: progress.silenceAllowed) }
            let bytes: [UInt8]?
            do {
                bytes = try await connection.receive()
                _ = silence.end()
            } catch {
                // Quiet between frames is fine (the session pings); quiet inside one is a stall.
                let silenced = silence.end()
                if inFlight, silenced || error == .timedOut(.idle) {
                    try progress.waited(.now - started, received: 0)
                    if silenced { throw .stalled(bytes: 0, waited: .now - started) }
                }
                throw .transport(error)
            }
            guard let bytes else {
                if inFlight { throw .truncated }
                return nil
            }
            if inFlight { try progress.waited(.now - started, received: bytes.count) }
            bytesRead += UInt64(bytes.count)
            framer.append(bytes)
        }
    }

    /// Decrypts what comes next in the stream, or returns nil when more bytes
    /// are needed: a Noise message, decrypted from where it lies in the framer's
    /// buffer, and where possible straight into the payload of the frame it
    /// continues (then no plaintext byte is ever copied) — or a shared segment's
    /// marker, header or sealed bytes.
    private func decryptNext() throws(SecureChannelError) -> Decrypted? {
        if case let .body(header) = segment {
            let opened = try framer.withNextBytes(header.length + Noise.tagLength) { (sealed) throws(SecureChannelError) -> Decrypted in
                try open(sealed, header: header)
            }
            if opened != nil {
                segment = .none
                streamOffset += UInt64(header.length)
            }
            return opened
        }
        return try framer.withNextMessage { (ciphertext: UnsafeRawBufferPointer) throws(SecureChannelError) -> Decrypted in
            if ciphertext.isEmpty {
                guard acceptsSegments else { throw .badSegment("the peer sent one, but this side never said it accepts them") }
                guard case .none = segment else { throw .badSegment("a marker where its header should be") }
                segment = .header
                return .segmentControl
            }
            if case .header = segment {
                segment = .body(try openHeader(ciphertext))
                return .segmentControl
            }
            do throws(NoiseError) {
                // Shorter than its tag: no transport message (found by the channel fuzzer, where a
                // count that went negative here trapped).
                guard ciphertext.count >= Noise.tagLength else { throw .decryptFailed }
                let count = ciphertext.count - Noise.tagLength
                let inPlace = try frames.appendInPlace(count: count) { (output: UnsafeMutableRawBufferPointer) throws(NoiseError) in
                    guard let base = output.baseAddress else { throw .truncated }
                    try cipher.decrypt(ciphertext, into: base)
                }
                let decrypted: Decrypted = inPlace ? .inPlace : .plaintext(try cipher.decrypt(ciphertext))
                streamOffset += UInt64(count)
                return decrypted
            } catch {
                throw .handshake(error)
            }
        }
    }

    /// A header message: it opens only with the header's associated data (so a
    /// transport message cannot pass for one, nor a header for stream bytes), it
    /// must name the offset the stream has reached, and its segment must be
    /// exactly the data of the Chunk frame under way — the only place a sender
    /// puts one. So a segment's bytes, which every co-recipient of a broadcast
    /// could forge, can only ever be chunk data, which the receiver checks
    /// against its hash; never a frame header.
    private func openHeader(_ ciphertext: UnsafeRawBufferPointer) throws(SecureChannelError) -> SegmentHeader {
        var plaintext: [UInt8]
        do throws(NoiseError) {
            plaintext = try cipher.decrypt(Array(ciphertext), ad: SegmentHeader.associatedData)
        } catch {
            throw .badSegment("its header message fails authentication as a header (a transport message, or out of place)")
        }
        defer { SecureBytes.wipe(&plaintext) }
        let header = try SegmentHeader(decoding: plaintext, limit: frames.maxFrameLength)
        guard header.offset == streamOffset else {
            throw .badSegment("its header says it begins at stream byte \(header.offset), but the stream is at \(streamOffset)")
        }
        guard let frame = frames.frameUnderWay, frame.type == WireMessageType.chunk.rawValue,
              frame.filled == WireMessage.Chunk.fieldsLength, frame.missing == header.length
        else {
            throw .badSegment("its \(header.length) bytes are not the data of the Chunk frame under way")
        }
        return header
    }

    /// A segment's sealed bytes, opened with the key its header gave — into the
    /// frame they continue when they lie inside it, as a Noise message's are.
    private func open(_ sealed: UnsafeRawBufferPointer, header: SegmentHeader) throws(SecureChannelError) -> Decrypted {
        do throws(NoiseError) {
            let inPlace = try frames.appendInPlace(count: header.length) { (output: UnsafeMutableRawBufferPointer) throws(NoiseError) in
                guard let base = output.baseAddress else { throw .truncated }
                try OneTimeSeal.open(sealed, key: header.key, cipher: cipher.cipher, into: base)
            }
            if inPlace { return .inPlace }
            return .plaintext(try OneTimeSeal.open(sealed, key: header.key, cipher: cipher.cipher))
        } catch {
            throw .badSegment("its \(header.length) bytes fail their tag")
        }
    }
}
