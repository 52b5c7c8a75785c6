import Foundation
import Testing
@testable import LocalFirstSync
@testable import LFSyncContent
@testable import LFSyncCrypto
@testable import LFSyncWire

/// Keeps PROTOCOL.md honest: its worked examples (fenced as ```hex id=NAME or
/// ```text id=NAME) must equal what the code produces, and its tables must
/// name the constants the code uses.
@Suite struct ProtocolDocumentTests {
    static let documentURL = TestSupport.packageRoot.appendingPathComponent("PROTOCOL.md")

    static func document() throws -> String {
        try String(contentsOf: documentURL, encoding: .utf8)
    }

    /// Every fenced example block: id → raw text between the fences.
    static func examples(kind: String) throws -> [String: String] {
        var blocks: [String: String] = [:]
        var currentID: String?
        var lines: [Substring] = []
        for line in try document().split(separator: "\n", omittingEmptySubsequences: false) {
            if let id = currentID {
                if line.trimmingCharacters(in: .whitespaces) == "```" {
                    blocks[id] = lines.joined(separator: "\n")
                    currentID = nil
                    lines = []
                } else {
                    lines.append(line)
                }
            } else if case let opening = line.drop(while: { $0 == " " }), opening.hasPrefix("```\(kind) id=") {
                // Indented inside a list item, or not.
                currentID = String(opening.dropFirst("```\(kind) id=".count)).trimmingCharacters(in: .whitespaces)
            }
        }
        return blocks
    }

    /// Hex digits of a block, ignoring white space and `#` comments.
    static func bytes(ofHexBlock block: String) throws -> [UInt8] {
        let digits = block.split(separator: "\n").map { line in
            line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        }.joined().filter { !$0.isWhitespace }
        #expect(digits.count % 2 == 0, "odd number of hex digits")
        var out: [UInt8] = []
        var index = digits.startIndex
        while index < digits.endIndex {
            let next = digits.index(index, offsetBy: 2, limitedBy: digits.endIndex) ?? digits.endIndex
            out.append(try #require(UInt8(digits[index..<next], radix: 16), "not hex: \(digits[index..<next])"))
            index = next
        }
        return out
    }

    static func hexExample(_ id: String) throws -> [UInt8] {
        let block = try #require(try examples(kind: "hex")[id], "PROTOCOL.md has no ```hex id=\(id) block")
        return try bytes(ofHexBlock: block)
    }

    static let exampleContentID = ContentID(hash: Hash256(bytes: [UInt8](repeating: 0x11, count: 32))!)

    @Test func deviceIDExample() throws {
        let key = try Self.hexExample("device-id-public-key")
        #expect(key == Array(0...31))
        #expect(try Self.hexExample("device-id-hash") == Blake2b.hash(key).bytes)
        let text = try #require(try Self.examples(kind: "text")["device-id"]).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(text == DeviceID(publicKey: key).description)
        #expect(try DeviceID(parsing: text) == DeviceID(publicKey: key))
    }

    /// A shared segment's header plaintext, and the associated data that sets a header
    /// message apart from a transport message, as the document spells them.
    @Test func segmentHeaderExample() throws {
        let header = SegmentHeader(offset: 1000, length: 65536, key: SecureBytes(copying: [UInt8](repeating: 0x42, count: 32)))
        #expect(try Self.hexExample("segment-header-plaintext") == header.encoded)
        let document = try String(contentsOf: Self.documentURL, encoding: .utf8)
        #expect(document.contains("associated data** `\(String(decoding: SegmentHeader.associatedData, as: UTF8.self))`"))
        let spelled = SegmentHeader.associatedData.map { String($0, radix: 16) }.joined(separator: " ")
        #expect(document.contains("`\(spelled)`"))
        #expect(document.contains("`\(String(decoding: SecureChannel.protocolTag, as: UTF8.self))` (`\(SecureChannel.protocolTag.map { String($0, radix: 16) }.joined(separator: " "))`"))
    }

    @Test func frameExamples() throws {
        let expected: [String: WireMessage] = [
            "hello-frame": .hello(.init(protocolVersion: 3, deviceName: "laptop", softwareVersion: "0.1.0", capabilities: .zstd)),
            "ping-frame": .ping(.init(nonce: 0x0102_0304_0506_0708)),
            "offer-reply-frame": .offerReply(.init(offerID: 7, decision: .accepted, needed: [
                .init(contentID: Self.exampleContentID, files: [.init(fileIndex: 0, chunks: ChunkIndexSet([0, 1, 2, 5]))]),
            ])),
            "chunk-frame": .chunk(.init(offerID: 7, contentID: Self.exampleContentID, fileIndex: 0, chunkIndex: 5,
                                        payload: .raw(Array("hello".utf8)))),
        ]
        var stream: [UInt8] = []
        for id in ["hello-frame", "ping-frame", "offer-reply-frame", "chunk-frame"] {
            let message = try #require(expected[id])
            let documented = try Self.hexExample(id)
            #expect(documented == (try message.frame().encoded()), "PROTOCOL.md example \(id)")
            var decoder = FrameDecoder()
            try decoder.append(documented)
            let frame = try #require(try decoder.nextFrame())
            #expect(try WireMessage(frame: frame) == message)
            stream += documented
        }
        let document = try Self.document()
        #expect(document.contains("form a \(stream.count)-byte stream"))
        #expect(document.contains("(\(stream.count) bytes of plaintext, \(stream.count + 16) bytes"))
    }

    /// The Offer example: one content at two placements, each with its own mtime and mode.
    @Test func offerExample() throws {
        let hello = Array("hello".utf8)
        func placement(_ path: RelativePath, _ mtime: Int64, mode: UInt32) -> Asset {
            var manifest = FileManifest(path: path, contents: hello, modificationTimeNs: mtime)
            manifest.permissions = mode
            return Asset(files: [.init(role: .primary, manifest: manifest)])
        }
        let asset = WireFixtures.placed(placement("a.txt", 1_700_000_000_000_000_000, mode: 0o644),
                                        placement("b/a.txt", 1_600_000_000_000_000_000, mode: 0o600))
        let message = WireMessage.offer(.init(offerID: 8, assets: [asset]))
        let documented = try Self.hexExample("offer-frame")
        #expect(documented == (try message.frame().encoded()))
        var decoder = FrameDecoder()
        try decoder.append(documented)
        #expect(try WireMessage(frame: #require(try decoder.nextFrame())) == message)
    }

    @Test func tablesNameTheCodeConstants() throws {
        let document = try Self.document()
        for type in WireMessageType.allCases {
            let hex = String(type.rawValue, radix: 16)
            let row = "| `0x\(hex.count == 1 ? "0" + hex : hex)` | \(type.description)"
            #expect(document.contains(row), "message type table lacks \(row)")
        }
        func grouped(_ value: Int) -> String {
            var digits = String(value)
            var groups: [String] = []
            while digits.count > 3 {
                groups.insert(String(digits.suffix(3)), at: 0)
                digits.removeLast(3)
            }
            groups.insert(digits, at: 0)
            return groups.joined(separator: " ")
        }
        for value in [FrameDecoder.defaultMaxFrameLength, Int(ChunkerConfiguration.absoluteMaxChunkSize),
                      FileManifest.Limits.maxChunkCount, WireMessage.Offer.maxAssets] {
            #expect(document.contains(grouped(value)), "PROTOCOL.md does not mention \(grouped(value))")
        }
        #expect(document.contains("\(FrameEncoder.maxPlaintextPerMessage)"))
        for heading in ["## Device ID", "## Framing", "## Messages", "## Chunk compression", "## Handshake and prologue",
                        "## Chunking and the gear table", "## Hashes", "## Content ID and manifests", "## Discovery (DNS-SD TXT keys)"] {
            #expect(document.contains("\n\(heading)\n"), "missing section \(heading)")
        }
    }
}

@Suite struct ProtocolContentExampleTests {
    /// "Holding checks": a HoldingCheck with proof for the Live Photo of the content-ID
    /// example, the proof's input as the document spells it, and the proof itself — made
    /// by `HoldingProof` from the files on disk and, independently, by one keyed BLAKE2b of
    /// the documented input.
    @Test func holdingProofExample() async throws {
        let nonce = try #require(Hash256(bytes: [UInt8](repeating: 0x42, count: 32)))
        let holder = DeviceID(publicKey: Array(0...31))
        try await TestSupport.withTemporaryDirectory { library in
            try TestSupport.write(Array("still".utf8), to: library.appendingPathComponent("IMG_0001.HEIC"))
            try TestSupport.write(Array("video".utf8), to: library.appendingPathComponent("IMG_0001.MOV"))
            let asset = Asset(files: [
                .init(role: .primary, manifest: FileManifest(path: "IMG_0001.HEIC", contents: Array("still".utf8))),
                .init(role: .livePhotoVideo, manifest: FileManifest(path: "IMG_0001.MOV", contents: Array("video".utf8))),
            ])
            let check = WireMessage.holdingCheck(.init(requestID: 9, contents: [asset.contentID], nonces: [nonce]))
            #expect(try ProtocolDocumentTests.hexExample("holding-check-frame") == (try check.frame().encoded()))
            let input = try ProtocolDocumentTests.hexExample("holding-proof-input")
            var keyed = KeyedBlake2b(key: nonce.bytes)
            keyed.update(input)
            let documented = try #require(try ProtocolDocumentTests.examples(kind: "text")["holding-proof"]).trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(keyed.finalizeAndReset().hex == documented)
            guard case let .proof(proof) = HoldingProof.compute(for: asset, in: library, nonce: nonce, holder: holder) else {
                Issue.record("no proof from intact files")
                return
            }
            #expect(proof.hex == documented)
            let report = WireMessage.holdingReport(.init(requestID: 9, answers: [.heldVerified(verifiedAt: 1_764_930_000_000, proof: proof)]))
            #expect(try ProtocolDocumentTests.hexExample("holding-report-frame") == (try report.frame().encoded()))
        }
    }

    @Test func contentIDExample() throws {
        let files: [(role: FileRole, fileHash: Hash256)] = [
            (.livePhotoVideo, FileManifest(path: "IMG_0001.MOV", contents: Array("video".utf8)).fileHash),
            (.primary, FileManifest(path: "IMG_0001.HEIC", contents: Array("still".utf8)).fileHash),
        ]
        #expect(ContentID.canonicalEncoding(of: files) == (try ProtocolDocumentTests.hexExample("content-id-encoding")))
        let text = try #require(try ProtocolDocumentTests.examples(kind: "text")["content-id"])
        #expect(ContentID(files: files).hex == text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// "Hashes": the chunk hash of `hello`, the chunk list its file hash is taken of, that
    /// file hash, and an empty file's.
    @Test func hashExamples() throws {
        let hello = Array("hello".utf8)
        let manifest = FileManifest(path: "hello.txt", contents: hello)
        #expect(try ProtocolDocumentTests.hexExample("chunk-hash-hello") == ContentHash.chunk(hello).bytes)
        #expect(try ProtocolDocumentTests.hexExample("chunk-hash-hello") == SpecHashes.chunk(hello).bytes)
        let input = try ProtocolDocumentTests.hexExample("file-hash-input-hello")
        #expect(input == [0, 0, 0, 1, 0, 0, 0, 5] + ContentHash.chunk(hello).bytes)
        let texts = try ProtocolDocumentTests.examples(kind: "text")
        func text(_ id: String) throws -> String { try #require(texts[id]).trimmingCharacters(in: .whitespacesAndNewlines) }
        #expect(try text("file-hash-hello") == manifest.fileHash.hex)
        #expect(try text("file-hash-hello") == SpecHashes.blake2b(input, key: "lfsync/3 file").hex)
        #expect(try text("file-hash-empty") == FileManifest(path: "empty", contents: []).fileHash.hex)
    }

    @Test func gearTableAndMasksMatchTheDocument() throws {
        let document = try ProtocolDocumentTests.document()
        #expect(document.contains(String(format: "Entry 0 is `0x%016llx`", GearTable.values[0])))
        let configuration = ChunkerConfiguration.default
        #expect(document.contains(String(format: "`0x%016llX`", configuration.smallMask)))
        #expect(document.contains(String(format: "`0x%016llX`", configuration.largeMask)))
    }
}
