import LFSyncContent
import LFSyncCrypto
import LFSyncSystem

extension WireMessage {
    /// Asks a trusted peer for the bytes of one chunk, named by its hash and length: what
    /// `lfsync verify --repair` fetches for the chunks of a damaged file that no longer
    /// match. The holder sends bytes only if a file of its library has a chunk that, read
    /// now, has this hash. Answered by a `ChunkReply`.
    package struct ChunkRequest: WireMessagePayload {
        static let messageType = WireMessageType.chunkRequest

        package var requestID: UInt64
        package var chunkHash: Hash256
        package var length: UInt32

        package init(requestID: UInt64, chunkHash: Hash256, length: UInt32) {
            self.requestID = requestID
            self.chunkHash = chunkHash
            self.length = length
        }

        func encode(into writer: inout ByteWriter) throws(WireError) {
            try Self.checking { () throws(ByteReaderError) in
                guard length >= 1 else { throw .invalidValue("a chunk request for 0 bytes") }
                guard length <= ChunkerConfiguration.absoluteMaxChunkSize else {
                    throw .lengthOverLimit(length: Int(length), limit: Int(ChunkerConfiguration.absoluteMaxChunkSize))
                }
            }
            writer.write(requestID)
            writer.write(chunkHash)
            writer.write(length)
        }

        init(from reader: inout ByteReader) throws(WireError) {
            (requestID, chunkHash, length) = try Self.decoding { () throws(ByteReaderError) in
                let requestID = try reader.readUInt64()
                let chunkHash = try reader.readHash()
                let length = try reader.readUInt32()
                // No chunk is empty: an empty file has no chunks.
                guard length >= 1 else { throw .invalidValue("a chunk request for 0 bytes") }
                guard length <= ChunkerConfiguration.absoluteMaxChunkSize else {
                    throw .lengthOverLimit(length: Int(length), limit: Int(ChunkerConfiguration.absoluteMaxChunkSize))
                }
                return (requestID, chunkHash, length)
            }
        }
    }

    /// The answer to a `ChunkRequest`: the chunk's bytes (raw), or why not.
    package struct ChunkReply: WireMessagePayload {
        static let messageType = WireMessageType.chunkReply
        static let maxLength = Int(ChunkerConfiguration.absoluteMaxChunkSize)

        package enum Outcome: Hashable, Sendable {
            case bytes(ArraySlice<UInt8>)
            /// No file here has that chunk with that hash (not held, changed or damaged).
            case notHeld
            /// Not answered: the asker is not trusted here.
            case refused
        }

        package var requestID: UInt64
        package var outcome: Outcome

        package init(requestID: UInt64, outcome: Outcome) {
            self.requestID = requestID
            self.outcome = outcome
        }

        func encode(into writer: inout ByteWriter) throws(WireError) {
            writer.write(requestID)
            switch outcome {
            case let .bytes(bytes):
                try Self.checking { () throws(ByteReaderError) in
                    guard bytes.count <= Self.maxLength else { throw .countOverLimit(count: bytes.count, limit: Self.maxLength) }
                }
                writer.write(UInt8(0))
                writer.write(UInt32(bytes.count))
                writer.write(contentsOf: bytes)
            case .notHeld:
                writer.write(UInt8(1))
            case .refused:
                writer.write(UInt8(2))
            }
        }

        init(from reader: inout ByteReader) throws(WireError) {
            (requestID, outcome) = try Self.decoding { () throws(ByteReaderError) in
                let requestID = try reader.readUInt64()
                let outcome: Outcome = switch try reader.readUInt8() {
                case 0: .bytes(try reader.readLengthPrefixedSlice(limit: Self.maxLength))
                case 1: .notHeld
                case 2: .refused
                case let other: throw ByteReaderError.invalidValue("chunk reply outcome \(other)")
                }
                return (requestID, outcome)
            }
        }
    }
}
