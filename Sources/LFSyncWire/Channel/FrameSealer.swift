import LFSyncCrypto
import LFSyncSystem

/// Turns messages into the bytes a channel writes to its socket: frames, cut
/// into Noise messages, encrypted, each behind its 2-byte length.
///
/// It produces exactly what `FrameEncoder` followed by one `encrypt` and one
/// `NoiseMessageFramer.prefixed` per plaintext would, with fewer copies: chunk
/// data is never copied into a frame (a Chunk becomes a small header piece
/// plus its data array, which is shared, not copied), and a Noise message that
/// lies inside one piece is encrypted straight from it into the output. Only a
/// message that straddles pieces is gathered in a 64 KiB scratch buffer.
/// Chunk data is most of the traffic, so a sent byte is now read once, by the
/// cipher, instead of being copied twice before it.
enum FrameSealer {
    /// A stretch of the outgoing byte stream: pieces sealed with the channel's
    /// own cipher, or one chunk's data already sealed once for every peer of a
    /// broadcast (PROTOCOL.md, "Shared segments").
    enum Part {
        case stream([ArraySlice<UInt8>])
        case segment(OneTimeSeal)
    }

    /// The frames of `messages` as one byte stream, in contiguous pieces.
    package static func pieces(of messages: [WireMessage]) throws(WireError) -> [ArraySlice<UInt8>] {
        var pieces: [ArraySlice<UInt8>] = []
        for part in try parts(of: messages, segmentCipher: nil) {
            if case let .stream(stream) = part { pieces += stream }
        }
        return pieces
    }

    /// The frames of `messages` as a byte stream in which the data of every
    /// chunk sealed once with `segmentCipher` is a segment of its own; with no
    /// cipher (a peer that does not accept segments), all of it is stream.
    static func parts(of messages: [WireMessage], segmentCipher: NoiseCipher?) throws(WireError) -> [Part] {
        var parts: [Part] = []
        var pieces: [ArraySlice<UInt8>] = []
        var small = ByteWriter(capacity: 256)
        for message in messages {
            guard case let .chunk(chunk) = message else {
                let frame = try message.frame()
                small.write(contentsOf: frame.header)
                small.write(contentsOf: frame.payload)
                continue
            }
            let length = WireMessage.Chunk.fieldsLength + chunk.payload.encodedLength
            guard length <= WireProtocol.maxPayloadLength else {
                throw .unencodable(.chunk, "payload of \(length) bytes exceeds the limit of \(WireProtocol.maxPayloadLength)")
            }
            small.write(WireMessageType.chunk.rawValue)
            small.write(UInt32(length))
            try chunk.encodeFields(into: &small)
            pieces.append(small.bytes[...])
            small = ByteWriter(capacity: 256)
            if let seal = chunk.sealedOnce, seal.cipher == segmentCipher, seal.plaintextCount == chunk.payload.encodedLength {
                parts.append(.stream(pieces))
                pieces = []
                parts.append(.segment(seal))
            } else {
                pieces.append(chunk.data)
            }
        }
        if !small.bytes.isEmpty { pieces.append(small.bytes[...]) }
        if !pieces.isEmpty { parts.append(.stream(pieces)) }
        return parts
    }

    /// The bytes for `parts`, in order: each stream stretch sealed by `seal(_:with:)`,
    /// each segment behind its marker and its header (both small, appended to the
    /// bytes before them) and then its sealed bytes as they are — shared with every
    /// other peer's channel, never copied. `streamOffset` counts the frame-stream
    /// bytes sent so far (a header names where its segment begins).
    static func seal(_ parts: [Part], with cipher: inout NoiseCipherState, streamOffset: inout UInt64) throws(NoiseError) -> [[UInt8]] {
        var outputs: [[UInt8]] = []
        var pending: [UInt8] = []
        for part in parts {
            switch part {
            case let .stream(pieces):
                let sealed = try seal(pieces, with: &cipher)
                streamOffset += UInt64(pieces.reduce(0) { $0 + $1.count })
                if pending.isEmpty { pending = sealed } else { pending += sealed }
            case let .segment(seal):
                var header = SegmentHeader(offset: streamOffset, length: seal.plaintextCount, key: seal.key).encoded
                defer { SecureBytes.wipe(&header) }
                let sealedHeader = try cipher.encrypt(header, ad: SegmentHeader.associatedData)
                streamOffset += UInt64(seal.plaintextCount)
                pending += SegmentHeader.marker
                NoiseMessageFramer.prefixed(sealedHeader, into: &pending)
                outputs.append(pending)
                pending = []
                outputs.append(seal.sealed)
            }
        }
        if !pending.isEmpty { outputs.append(pending) }
        return outputs
    }

    /// `pieces` for frames given as they are (no per-message checks).
    package static func pieces(of frames: [Frame]) -> [ArraySlice<UInt8>] {
        frames.flatMap { [$0.header[...], $0.payload[...]] }
    }

    /// Encrypts the stream `pieces` into length-prefixed Noise messages of at
    /// most `FrameEncoder.maxPlaintextPerMessage` plaintext bytes each.
    package static func seal(_ pieces: [ArraySlice<UInt8>], with cipher: inout NoiseCipherState) throws(NoiseError) -> [UInt8] {
        let total = pieces.reduce(0) { $0 + $1.count }
        let maxPlaintext = FrameEncoder.maxPlaintextPerMessage
        let messageCount = (total + maxPlaintext - 1) / maxPlaintext
        let outputCount = total + messageCount * (2 + Noise.tagLength)
        // Never an uninitialised array of capacity 0: it would write into the shared empty-array singleton.
        guard outputCount > 0 else { return [] }
        var cursor = PieceCursor(pieces: pieces)
        var scratch: [UInt8] = []
        var failure: NoiseError?
        let output = [UInt8](unsafeUninitializedCapacity: outputCount) { buffer, initialized in
            guard let base = buffer.baseAddress else { return }
            var position = 0
            var remaining = total
            while remaining > 0 {
                let length = min(maxPlaintext, remaining)
                let sealedLength = length + Noise.tagLength
                base[position] = UInt8(truncatingIfNeeded: sealedLength >> 8)
                base[position + 1] = UInt8(truncatingIfNeeded: sealedLength)
                let target = UnsafeMutableRawPointer(base + position + 2)
                failure = cursor.withNext(length, scratch: &scratch) { plaintext -> NoiseError? in
                    do throws(NoiseError) {
                        try cipher.encrypt(plaintext, into: target)
                        return nil
                    } catch {
                        return error
                    }
                }
                if failure != nil { break }
                position += 2 + sealedLength
                remaining -= length
            }
            initialized = position
        }
        if let failure { throw failure }
        return output
    }
}

/// A read position in a list of byte slices treated as one stream.
private struct PieceCursor {
    let pieces: [ArraySlice<UInt8>]
    private var index = 0
    /// Bytes of `pieces[index]` already consumed.
    private var offset = 0

    init(pieces: [ArraySlice<UInt8>]) {
        self.pieces = pieces
    }

    /// Calls `body` with the next `count` bytes: in place when one piece holds
    /// them all, otherwise gathered into `scratch`.
    mutating func withNext<R>(_ count: Int, scratch: inout [UInt8], _ body: (UnsafeRawBufferPointer) -> R) -> R {
        while index < pieces.count, offset == pieces[index].count {
            index += 1
            offset = 0
        }
        if index < pieces.count, pieces[index].count - offset >= count {
            let start = offset
            offset += count
            // The buffer starts at the slice's first byte, whatever its indices.
            return pieces[index].withUnsafeBytes { bytes in
                body(UnsafeRawBufferPointer(rebasing: bytes[start..<start + count]))
            }
        }
        scratch.removeAll(keepingCapacity: true)
        while scratch.count < count, index < pieces.count {
            let piece = pieces[index]
            let take = min(count - scratch.count, piece.count - offset)
            let from = piece.startIndex + offset
            scratch.append(contentsOf: piece[from..<from + take])
            offset += take
            if offset == piece.count {
                index += 1
                offset = 0
            }
        }
        return scratch.withUnsafeBytes { body($0) }
    }
}
