import LFSyncContent
import LFSyncCrypto
import LFSyncSystem

extension WireMessage {
    /// One requested chunk of one file of an accepted offer. The receiver
    /// checks that it asked for exactly this chunk, decodes the payload and
    /// verifies the chunk hash from the manifest before keeping a byte.
    package struct Chunk: WireMessagePayload {
        static let messageType = WireMessageType.chunk
        static let maxLength = Int(ChunkerConfiguration.absoluteMaxChunkSize)

        package var offerID: UInt64
        package var contentID: ContentID
        package var fileIndex: UInt16
        package var chunkIndex: UInt32
        package var payload: ChunkPayload
        /// `data` sealed once for every peer of a broadcast, when the sender did
        /// (never on the wire as a field, never set on a received chunk): a channel
        /// whose peer accepts shared segments sends this instead of encrypting
        /// `data` itself (PROTOCOL.md, "Shared segments").
        package var sealedOnce: OneTimeSeal?

        package init(
            offerID: UInt64, contentID: ContentID, fileIndex: UInt16, chunkIndex: UInt32, payload: ChunkPayload,
            sealedOnce: OneTimeSeal? = nil
        ) {
            self.offerID = offerID
            self.contentID = contentID
            self.fileIndex = fileIndex
            self.chunkIndex = chunkIndex
            self.payload = payload
            self.sealedOnce = sealedOnce
        }

        func encode(into writer: inout ByteWriter) throws(WireError) {
            try encodeFields(into: &writer)
            writer.write(contentsOf: data)
        }

        /// The bytes on the wire after the fields: raw or compressed chunk data.
        var data: ArraySlice<UInt8> { payload.data }

        /// Everything of the encoding before `data` (which follows as is), so a
        /// sender can put the data on the wire without copying it into a frame.
        func encodeFields(into writer: inout ByteWriter) throws(WireError) {
            try Self.checking { () throws(ByteReaderError) in
                try Self.validate(fileIndex: fileIndex, chunkIndex: chunkIndex,
                                  decodedLength: payload.decodedLength, dataLength: payload.encodedLength)
            }
            writer.write(offerID)
            writer.write(contentID.hash)
            writer.write(fileIndex)
            writer.write(chunkIndex)
            writer.write(payload.encodingByte)
            writer.write(UInt32(payload.decodedLength))
            writer.write(UInt32(payload.encodedLength))
        }

        /// Size of the fields written by `encodeFields`.
        static let fieldsLength = 8 + Hash256.byteCount + 2 + 4 + 1 + 4 + 4

        init(from reader: inout ByteReader) throws(WireError) {
            (offerID, contentID, fileIndex, chunkIndex, payload) = try Self.decoding { () throws(ByteReaderError) in
                let offerID = try reader.readUInt64()
                let contentID = ContentID(hash: try reader.readHash())
                let fileIndex = try reader.readUInt16()
                let chunkIndex = try reader.readUInt32()
                let encoding = try reader.readUInt8()
                let decodedLength = Int(try reader.readUInt32())
                // Raw data stays inside the frame's buffer (most of the traffic: no copy).
                let data = try reader.readLengthPrefixedSlice(limit: Self.maxLength)
                try Self.validate(fileIndex: fileIndex, chunkIndex: chunkIndex, decodedLength: decodedLength, dataLength: data.count)
                let payload: ChunkPayload = switch encoding {
                case 0 where decodedLength == data.count: .raw(data)
                case 0: throw ByteReaderError.invalidValue("raw chunk of \(data.count) bytes declares \(decodedLength)")
                case 1: .zstd(compressed: Array(data), decodedLength: decodedLength)
                default: throw ByteReaderError.invalidValue("chunk encoding \(encoding)")
                }
                return (offerID, contentID, fileIndex, chunkIndex, payload)
            }
            if case let .zstd(compressed, length) = payload {
                try ZstdDecompressor.validateHeader(of: compressed, declaredLength: length)
            }
        }

        static func validate(fileIndex: UInt16, chunkIndex: UInt32, decodedLength: Int, dataLength: Int) throws(ByteReaderError) {
            guard fileIndex < Asset.Limits.maxFilesPerAsset else { throw .invalidValue("file index \(fileIndex)") }
            guard chunkIndex < FileManifest.Limits.maxChunkCount else { throw .invalidValue("chunk index \(chunkIndex)") }
            guard decodedLength > 0, decodedLength <= maxLength else {
                throw .lengthOverLimit(length: decodedLength, limit: maxLength)
            }
            guard dataLength > 0, dataLength <= maxLength else { throw .lengthOverLimit(length: dataLength, limit: maxLength) }
        }
    }
}
