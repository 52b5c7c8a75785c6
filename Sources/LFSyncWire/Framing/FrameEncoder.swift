import LFSyncCrypto

/// Turns frames into Noise transport plaintexts.
///
/// The frames are written as one byte stream (header, payload, header, ...)
/// that is cut into consecutive plaintexts of at most
/// `maxPlaintextPerMessage` bytes: the Noise limit of 65535 bytes per message
/// minus the 16-byte Poly1305 tag. A large Chunk frame spans many messages;
/// several small frames given together share one. The receiver does not care
/// where the cuts are (`FrameDecoder` reassembles any split), so a sender is
/// free to flush earlier.
package enum FrameEncoder {
    package static let maxPlaintextPerMessage = Noise.maxMessageLength - Noise.tagLength

    /// Calls `body` with each plaintext in order, building one at a time so a
    /// 16 MiB frame never exists twice in memory.
    package static func forEachPlaintext<E: Error>(
        of frames: some Sequence<Frame>,
        maxPlaintextLength: Int = maxPlaintextPerMessage,
        _ body: ([UInt8]) throws(E) -> Void
    ) throws(E) {
        precondition(maxPlaintextLength > 0 && maxPlaintextLength <= maxPlaintextPerMessage)
        var message = [UInt8]()
        message.reserveCapacity(maxPlaintextLength)
        for frame in frames {
            for segment in [frame.header, frame.payload] {
                var offset = 0
                while offset < segment.count {
                    let take = min(segment.count - offset, maxPlaintextLength - message.count)
                    message.append(contentsOf: segment[offset..<offset + take])
                    offset += take
                    if message.count == maxPlaintextLength {
                        try body(message)
                        message.removeAll(keepingCapacity: true)
                    }
                }
            }
        }
        if !message.isEmpty { try body(message) }
    }

    /// All plaintexts for `frames` at once (convenient for small frames and tests).
    package static func plaintexts(
        for frames: some Sequence<Frame>, maxPlaintextLength: Int = maxPlaintextPerMessage
    ) -> [[UInt8]] {
        var out: [[UInt8]] = []
        forEachPlaintext(of: frames, maxPlaintextLength: maxPlaintextLength) { out.append($0) }
        return out
    }
}
