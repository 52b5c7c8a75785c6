import Dispatch
import LFSyncContent
import LFSyncCrypto
import LFSyncDiscovery
import LFSyncSystem
import LFSyncTransport
import LFSyncWire

/// Every parser of untrusted bytes, as a function of one input: what
/// libFuzzer drives (`make fuzz`) and what the test suite replays over the
/// corpus in `Fuzz/corpus/<target>/` (`FuzzCorpusTests`). A target must
/// return normally on any input; a trap, a sanitizer report or a hang is a
/// finding.
package enum FuzzTarget: String, CaseIterable, Sendable {
    /// Frames, then every message decoder (Hello, Offer with its manifests,
    /// OfferReply with its NeededChunks, Chunk, Receipt, Error, …) on what they hold.
    case frames
    /// Noise messages on a byte stream, cut into receives by the input itself.
    case noiseFramer = "noise-framer"
    /// A secure channel's receiving half on a real cipher: the input is a script
    /// of transport messages, segment markers, headers and sealed bytes that the
    /// harness encrypts, so the fuzzer reaches past the tags.
    case channel
    /// A zstd Chunk payload, decompressed to its declared length.
    case zstd
    /// An Apple content identifier from a JPEG (Exif in APP1, TIFF inside).
    case jpeg
    /// From an ISO base media file: HEIF (Exif item: iinf, iloc, idat) or QuickTime (moov/meta).
    case isoBaseMedia = "isobmff"
    /// A TIFF directory, behind the smallest JPEG and Exif header that lead to it.
    case tiff
    /// A DNS-SD TXT record.
    case txt
    /// A path as a peer sends it, validated for the library.
    case path

    /// Runs the target on one input.
    package func run(_ data: [UInt8]) {
        switch self {
        case .frames: Self.frames(data)
        case .noiseFramer: Self.noiseFramer(data)
        case .channel: ChannelScript.run(data)
        case .zstd: Self.zstd(data)
        case .jpeg: _ = try? AppleContentIdentifierReader.contentIdentifier(in: data, format: .jpeg)
        case .isoBaseMedia: _ = try? AppleContentIdentifierReader.contentIdentifier(in: data, format: .isoBaseMedia)
        case .tiff: Self.tiff(data)
        case .txt: _ = DiscoveryTXTRecord(parsing: data)
        case .path: Self.path(data)
        }
    }

    /// The frame decoder at the frame limit before consent, then every frame's message.
    private static func frames(_ data: [UInt8]) {
        for limit in [WireProtocol.setUpFrameLimit, FrameDecoder.defaultMaxFrameLength] {
            var decoder = FrameDecoder(maxFrameLength: limit)
            // Cut where the first byte says, so headers and payloads straddle appends.
            let cut = data.isEmpty ? 0 : Int(data[0]) % (data.count + 1)
            do {
                try decoder.append(data[..<cut])
                try decoder.append(data[cut...])
                while let frame = try decoder.nextFrame() {
                    if let message = try? WireMessage(frame: frame), case let .chunk(chunk) = message { _ = try? chunk.payload.decoded() }
                }
                try? decoder.finish()
            } catch {}
        }
    }

    /// Byte 0 picks the receive size; messages and raw byte runs are asked for in turn.
    private static func noiseFramer(_ data: [UInt8]) {
        guard let first = data.first else { return }
        let step = Int(first) + 1
        var framer = NoiseMessageFramer()
        var offset = 1
        var askRaw = false
        while offset < data.count {
            framer.append(Array(data[offset..<min(data.count, offset + step)]))
            offset += step
            while true {
                let got: Bool
                if askRaw {
                    got = framer.withNextBytes(Int(data[offset % data.count]) * 97 + 1) { _ in () } != nil
                } else {
                    got = framer.next() != nil
                }
                askRaw.toggle()
                if !got { break }
            }
        }
        _ = framer.hasPartialMessage
    }

    private static func zstd(_ data: [UInt8]) {
        guard data.count >= 3 else { return }
        let declared = (Int(data[0]) << 16 | Int(data[1]) << 8 | Int(data[2])) % (Int(ChunkerConfiguration.absoluteMaxChunkSize) + 1)
        _ = try? ZstdDecompressor().decompress(Array(data.dropFirst(3)), declaredLength: max(1, declared))
    }

    private static func tiff(_ data: [UInt8]) {
        let exif = Array("Exif".utf8) + [0, 0] + data
        let length = min(exif.count + 2, 0xFFFF)
        let jpeg = [0xFF, 0xD8, 0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + exif.prefix(length - 2) + [0xFF, 0xD9]
        _ = try? AppleContentIdentifierReader.contentIdentifier(in: jpeg, format: .jpeg)
    }

    private static func path(_ data: [UInt8]) {
        if let text = String(validating: data, as: UTF8.self) { _ = try? LibraryPath.validate(text) }
    }
}
