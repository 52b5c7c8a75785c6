import Testing
@testable import LocalFirstSync
@testable import LFSyncContent
@testable import LFSyncCrypto
@testable import LFSyncSystem
@testable import LFSyncWire

@Suite struct WireMessageTests {
    private func roundTrip(_ message: WireMessage) throws -> WireMessage {
        let frame = try message.frame()
        #expect(frame.type == message.type.rawValue)
        return try WireMessage(frame: frame)
    }

    private func decode(_ type: WireMessageType, _ payload: [UInt8]) throws(WireError) -> WireMessage {
        try WireMessage(frame: Frame(type: type.rawValue, payload: payload))
    }

    private func payload(_ message: WireMessage) throws -> [UInt8] {
        try message.frame().payload
    }

    @Test func everyMessageRoundTrips() throws {
        let messages = WireFixtures.messages
        #expect(Set(messages.map(\.type)) == Set(WireMessageType.allCases), "fixtures cover every message type")
        for message in messages {
            #expect(try roundTrip(message) == message, "\(message.type)")
        }
    }

    @Test func offerKeepsCanonicalFileOrderAndContentIDs() throws {
        guard case let .offer(offer) = try roundTrip(.offer(.init(offerID: 1, assets: [WireFixtures.placed(WireFixtures.livePhoto)]))) else {
            Issue.record("not an offer"); return
        }
        let asset = try #require(offer.assets.first)
        #expect(asset.contentID == WireFixtures.livePhoto.contentID)
        #expect(asset.files.map(\.role) == [.primary, .livePhotoVideo, .sidecar])
    }

    @Test func unknownTypeIsAMessageError() {
        #expect(throws: WireError.unknownMessageType(0x7E)) { try WireMessage(frame: Frame(type: 0x7E, payload: [])) }
    }

    @Test func unsupportedHelloVersionGetsAClearError() throws {
        for version: UInt16 in [1, 2, 4] {
            var hello = WireMessage.Hello(deviceName: "elsewhen", softwareVersion: "9.0")
            hello.protocolVersion = version
            let frame = try WireMessage.hello(hello).frame()
            #expect(throws: WireError.unsupportedProtocolVersion(version)) { try WireMessage(frame: frame) }
        }
        let reply = WireMessage.ErrorMessage(for: .unsupportedProtocolVersion(2))
        #expect(reply.code == .unsupportedProtocolVersion)
        #expect(reply.message.contains("protocol version 2 is not supported"))
        #expect(reply.message.contains("speaks version 3"))
        #expect(try roundTrip(.error(reply)) == .error(reply))
    }

    /// PROTOCOL.md, "Limits and deadlines": a HoldingCheck names each content once (one
    /// listed a thousand times would cost a thousand reads of it with proof), and a
    /// ChunkRequest asks for at least one byte. Neither encodes, and neither decodes.
    @Test func aContentNamedTwiceAndAnEmptyChunkRequestAreMalformed() throws {
        let content = ContentID(hash: Hash256(bytes: [UInt8](repeating: 9, count: 32))!)
        let twice = WireMessage.holdingCheck(.init(requestID: 1, contents: [content, content]))
        #expect(throws: WireError.self) { try twice.frame() }
        var writer = ByteWriter()
        writer.write(UInt64(1)); writer.write(UInt8(0)); writer.write(UInt16(2)); writer.write(content.hash); writer.write(content.hash)
        #expect(throws: WireError.self) { try WireMessage(frame: Frame(type: WireMessageType.holdingCheck.rawValue, payload: writer.bytes)) }
        let empty = WireMessage.chunkRequest(.init(requestID: 1, chunkHash: content.hash, length: 0))
        #expect(throws: WireError.self) { try empty.frame() }
        var request = ByteWriter()
        request.write(UInt64(1)); request.write(content.hash); request.write(UInt32(0))
        #expect(throws: WireError.self) { try WireMessage(frame: Frame(type: WireMessageType.chunkRequest.rawValue, payload: request.bytes)) }
        // What decoding errors become on the wire: Error 2.
        do { _ = try WireMessage(frame: Frame(type: WireMessageType.chunkRequest.rawValue, payload: request.bytes)) } catch {
            #expect(WireMessage.ErrorMessage(for: error).code == .malformedMessage)
        }
    }

    @Test func trailingBytesAreRejected() throws {
        for message in WireFixtures.messages {
            let frame = try message.frame()
            #expect(throws: WireError.malformed(message.type, .trailingBytes(1))) {
                try WireMessage(frame: Frame(type: frame.type, payload: frame.payload + [0]))
            }
        }
    }

    @Test func everyTruncationIsRejected() throws {
        for message in WireFixtures.messages {
            let payload = try payload(message)
            for length in 0..<payload.count {
                #expect(throws: WireError.self) { try decode(message.type, Array(payload.prefix(length))) }
            }
        }
    }

    @Test func textLimitsAndControlCharacters() throws {
        let longName = String(repeating: "x", count: WireMessage.Hello.maxDeviceNameBytes + 1)
        #expect(throws: WireError.self) { try WireMessage.hello(.init(deviceName: longName)).frame() }
        #expect(throws: WireError.self) { try WireMessage.hello(.init(deviceName: "evil\u{1B}[2J")).frame() }
        #expect(throws: WireError.self) { try WireMessage.hello(.init(deviceName: "abc\u{202E}gpj")).frame() }
        #expect(throws: WireError.self) {
            try WireMessage.error(.init(code: .internalError, message: String(repeating: "é", count: 513))).frame()
        }
        // The same rules hold when decoding what a peer sent.
        var writer = ByteWriter()
        writer.write(WireProtocol.version)
        writer.writeString("evil\u{07}")
        writer.writeString("1.0")
        writer.write(UInt32(0))
        #expect(throws: WireError.malformed(.hello, .invalidValue("device name contains control characters"))) {
            try decode(.hello, writer.bytes)
        }
        // `fitted` makes anything acceptable.
        let fitted = WireText.fitted("\u{1B}[31mRed laptop 💻 " + longName, maxBytes: WireMessage.Hello.maxDeviceNameBytes)
        #expect(fitted.utf8.count <= WireMessage.Hello.maxDeviceNameBytes)
        #expect(try roundTrip(.hello(.init(deviceName: fitted))) == .hello(.init(deviceName: fitted)))
    }

    @Test func booleansAndEnumsAcceptOnlyDefinedValues() throws {
        #expect(throws: WireError.malformed(.connectionDecision, .invalidValue("accepted byte 2, expected 0 or 1"))) {
            try decode(.connectionDecision, [2, 0])
        }
        var receipt = try payload(.receipt(.init(offerID: 1, contentID: WireFixtures.photo.contentID, outcome: .stored)))
        receipt[receipt.count - 1] = 2
        #expect(throws: WireError.malformed(.receipt, .invalidValue("receipt outcome 2"))) { try decode(.receipt, receipt) }
    }

    /// Offer ID and a push header: what precedes the asset count.
    private func offerHeader(offerID: UInt64 = 1) -> ByteWriter {
        var writer = ByteWriter()
        writer.write(offerID)
        WireMessage.PushHeader(pushID: offerID, isLast: true, fileCount: 1, byteCount: 1).encode(into: &writer)
        return writer
    }

    @Test func offerCountIsCheckedBeforeAllocation() throws {
        var writer = offerHeader()
        writer.write(UInt32.max)
        #expect(throws: WireError.malformed(.offer, .countOverLimit(count: Int(UInt32.max), limit: WireMessage.Offer.maxAssets))) {
            try decode(.offer, writer.bytes)
        }
        // Under the limit but more than the payload could hold: refused before reserving.
        writer = offerHeader()
        writer.write(UInt32(WireMessage.Offer.maxAssets))
        #expect(throws: WireError.self) { try decode(.offer, writer.bytes + [UInt8](repeating: 0, count: 100)) }
    }

    @Test func offerRejectsDuplicatesAndRepeatedPaths() throws {
        let photo = WireFixtures.placed(WireFixtures.photo)
        let duplicate = WireMessage.offer(.init(offerID: 1, assets: [photo, photo]))
        #expect(throws: WireError.self) { try duplicate.frame() }
        // Build the duplicate by hand to check the decoder too.
        var writer = offerHeader()
        writer.write(UInt32(2))
        photo.encode(into: &writer)
        photo.encode(into: &writer)
        #expect(throws: WireError.malformed(.offer, .invalidValue("asset \(photo.contentID.hash.shortHex) offered twice"))) {
            try decode(.offer, writer.bytes)
        }
        // One path standing for two contents: refused (the receiver could land only one of them).
        var other = WireFixtures.livePhoto.files.map { $0 }
        other[0].manifest.path = WireFixtures.photo.files[0].manifest.path
        let clash = WireFixtures.placed(Asset(files: other))
        writer = offerHeader()
        writer.write(UInt32(2))
        photo.encode(into: &writer)
        clash.encode(into: &writer)
        #expect(throws: WireError.self) { try decode(.offer, writer.bytes) }
    }

    /// One OfferedFile as a test writes it: chunk hashes made up from `seed`, and the file
    /// hash — not on the wire — made from them, which decides the canonical order.
    private struct OfferedFile {
        var role: FileRole
        var seed: String
        var chunks: [UInt32]

        var chunkRefs: [ChunkRef] {
            chunks.enumerated().map { ChunkRef(length: $1, hash: WireFixtures.hash("\(seed)/\($0)")) }
        }

        var fileHash: Hash256 { ContentHash.file(chunks: chunkRefs) }
    }

    /// The bytes of an offer: header and one asset written field by field, so each
    /// rule of PROTOCOL.md's Asset encoding can be broken on purpose.
    private func offer(files: [OfferedFile], placements: [[String]], mode: UInt16 = 0o644) -> [UInt8] {
        var writer = offerHeader()
        writer.write(UInt32(1))
        writer.write(UInt16(files.count))
        for file in files {
            writer.write(file.role.rawValue)
            writer.write(file.chunks.reduce(UInt64(0)) { $0 + UInt64($1) })
            writer.write(UInt32(file.chunks.count))
            for chunk in file.chunkRefs {
                writer.write(chunk.length)
                writer.write(chunk.hash)
            }
        }
        writer.write(UInt32(placements.count))
        for placement in placements {
            for path in placement {
                writer.writeString(path)
                writer.write(Int64(0))
                writer.write(mode)
            }
        }
        return writer.bytes
    }

    @Test func offerAssetsHaveOneCanonicalEncoding() throws {
        let photo = OfferedFile(role: .primary, seed: "photo", chunks: [10])
        let (low, high) = [OfferedFile(role: .sidecar, seed: "a", chunks: [5]), OfferedFile(role: .sidecar, seed: "b", chunks: [5])]
            .sorted { $0.fileHash < $1.fileHash }.pair
        // Valid: files by role then hash; tied identical files by path bytes.
        let valid = offer(files: [photo, low, high], placements: [["a.jpg", "a.aae", "a.xmp"], ["b/a.jpg", "b/a.aae", "b/a.xmp"]])
        guard case let .offer(decoded) = try decode(.offer, valid) else { Issue.record("not an offer"); return }
        #expect(decoded.assets.first?.placements.count == 2)
        #expect(decoded.assets.first?.placements[1].files.map(\.manifest.path) == ["b/a.jpg", "b/a.aae", "b/a.xmp"])
        #expect(decoded.assets.first?.placements[0].files.map(\.manifest.fileHash) == [photo.fileHash, low.fileHash, high.fileHash],
                "each file hash made from its chunk list")
        // Roles out of order.
        #expect(throws: WireError.self) { try decode(.offer, offer(files: [low, photo], placements: [["x.aae", "x.jpg"]])) }
        // Hashes out of order within a role.
        #expect(throws: WireError.self) { try decode(.offer, offer(files: [high, low], placements: [["x.aae", "x.xmp"]])) }
        // (Two files with one hash and different chunk lists cannot be written: the hash is the chunk list's.)
        // Tied identical files must list their paths in byte order...
        #expect(throws: WireError.self) { try decode(.offer, offer(files: [low, low], placements: [["y.aae", "x.aae"]])) }
        // ...which is not Unicode order: NFD "e\u{301}" (0x65 …) sorts before NFC "é" (0xC3 …).
        let nfd = "cafe\u{301}.aae", nfc = "caf\u{E9}.aae"
        _ = try decode(.offer, offer(files: [low, low], placements: [[nfd, nfc]]))
        #expect(throws: WireError.self) { try decode(.offer, offer(files: [low, low], placements: [[nfc, nfd]])) }
        // An asset needs a placement.
        #expect(throws: WireError.self) { try decode(.offer, offer(files: [photo], placements: [])) }
        // NFC and NFD twins are two paths: both may be offered.
        _ = try decode(.offer, offer(files: [photo], placements: [[nfc], [nfd]]))
    }

    /// PlacedFile's mode: the source's permission bits travel as sent, setuid and all (the
    /// receiver decides what to keep); a bit above 0o7777 makes the offer malformed.
    @Test func aPlacedFileCarriesItsModeAndNothingBeyondPermissionBits() throws {
        let photo = OfferedFile(role: .primary, seed: "a", chunks: [10])
        guard case let .offer(decoded) = try decode(.offer, offer(files: [photo], placements: [["a.jpg"]], mode: 0o4755)) else {
            Issue.record("not an offer")
            return
        }
        #expect(decoded.assets.first?.placements.first?.files.first?.manifest.permissions == 0o4755)
        #expect(throws: WireError.self) { try decode(.offer, offer(files: [photo], placements: [["a.jpg"]], mode: 0o10644)) }
    }

    @Test func offerReplyRules() throws {
        let entry = WireMessage.NeededChunks(contentID: WireFixtures.photo.contentID, files: [.init(fileIndex: 0, chunks: .all(count: 2))])
        #expect(throws: WireError.self) { try WireMessage.offerReply(.init(offerID: 1, decision: .declined, needed: [entry])).frame() }
        #expect(throws: WireError.self) { try WireMessage.offerReply(.init(offerID: 1, decision: .refused, needed: [entry])).frame() }
        #expect(throws: WireError.self) { try WireMessage.offerReply(.init(offerID: 1, decision: .accepted, needed: [entry, entry])).frame() }
        #expect(throws: WireError.malformed(.offerReply, .invalidValue("decision 3"))) { try decode(.offerReply, [0, 0, 0, 0, 0, 0, 0, 1, 3, 0, 0, 0, 0, 0]) }
        let tooFar = WireMessage.NeededChunks(contentID: WireFixtures.photo.contentID, files: [
            .init(fileIndex: 0, chunks: .all(count: UInt32(FileManifest.Limits.maxChunkCount) + 1)),
        ])
        #expect(throws: WireError.self) { try WireMessage.offerReply(.init(offerID: 1, decision: .accepted, needed: [tooFar])).frame() }

        // Non-canonical ranges from a peer (overlapping, adjacent, empty) are refused.
        for ranges: [(UInt32, UInt32)] in [[(0, 2), (1, 1)], [(0, 2), (2, 1)], [(3, 0)], [(5, 1), (0, 1)]] {
            var writer = ByteWriter()
            writer.write(UInt64(1))
            writer.write(UInt8(0))  // accepted
            writer.write(UInt8(0))
            writer.write(UInt32(1))
            writer.write(WireFixtures.photo.contentID.hash)
            writer.write(UInt16(1))
            writer.write(UInt16(0))
            writer.write(UInt32(ranges.count))
            for (start, count) in ranges {
                writer.write(start)
                writer.write(count)
            }
            #expect(throws: WireError.self, "\(ranges)") { try decode(.offerReply, writer.bytes) }
        }
    }

    @Test func chunkIndexSetNormalises() {
        let set = ChunkIndexSet(ranges: [5..<7, 0..<2, 2..<3, 6..<9, 4..<4])
        #expect(set.ranges == [0..<3, 5..<9])
        #expect(set.count == 7)
        #expect(Array(set) == [0, 1, 2, 5, 6, 7, 8])
        #expect(set.contains(2) && set.contains(8) && !set.contains(3) && !set.contains(9))
        #expect(ChunkIndexSet([9, 1, 2, 3, 3]).ranges == [1..<4, 9..<10])
        #expect(ChunkIndexSet().isEmpty && !ChunkIndexSet().contains(0))
    }

    @Test func chunkFieldLimits() throws {
        let contentID = WireFixtures.photo.contentID
        let tooBig = [UInt8](repeating: 0, count: Int(ChunkerConfiguration.absoluteMaxChunkSize) + 1)
        #expect(throws: WireError.self) {
            try WireMessage.chunk(.init(offerID: 1, contentID: contentID, fileIndex: 0, chunkIndex: 0, payload: .raw(tooBig))).frame()
        }
        #expect(throws: WireError.self) {
            try WireMessage.chunk(.init(offerID: 1, contentID: contentID, fileIndex: 0, chunkIndex: 0, payload: .raw([]))).frame()
        }
        #expect(throws: WireError.self) {
            try WireMessage.chunk(.init(offerID: 1, contentID: contentID, fileIndex: 64, chunkIndex: 0, payload: .raw([1]))).frame()
        }
        // A raw chunk whose declared length disagrees with its data.
        var payload = try payload(.chunk(.init(offerID: 1, contentID: contentID, fileIndex: 0, chunkIndex: 0, payload: .raw([1, 2, 3]))))
        payload[8 + 32 + 2 + 4 + 1 + 3] = 4
        #expect(throws: WireError.self) { try decode(.chunk, payload) }
        // A data length over the cap is refused from the length field alone.
        var writer = ByteWriter()
        writer.write(UInt64(1))
        writer.write(contentID.hash)
        writer.write(UInt16(0))
        writer.write(UInt32(0))
        writer.write(UInt8(0))
        writer.write(UInt32(1))
        writer.write(UInt32.max)
        #expect(throws: WireError.malformed(.chunk, .lengthOverLimit(length: Int(UInt32.max), limit: Int(ChunkerConfiguration.absoluteMaxChunkSize)))) {
            try decode(.chunk, writer.bytes)
        }
    }

    @Test func errorMessageForEveryWireError() throws {
        let errors: [WireError] = [
            .unknownMessageType(0x99), .malformed(.offer, .truncated(needed: 4, available: 1)),
            .unsupportedProtocolVersion(7), .unencodable(.chunk, "x"), .decompressionFailed("bad"),
            .decompressedTooLarge(declared: 10), .decompressedSizeMismatch(declared: 10, actual: 9),
        ]
        for error in errors {
            let message = WireMessage.ErrorMessage(for: error)
            #expect(try roundTrip(.error(message)) == .error(message))
            #expect(!error.description.isEmpty)
        }
    }
}

private extension Array {
    /// The two elements of a two-element array.
    var pair: (Element, Element) { (self[0], self[1]) }
}
