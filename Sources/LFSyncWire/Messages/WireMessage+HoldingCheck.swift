import LFSyncContent
import LFSyncCrypto
import LFSyncSystem

extension WireMessage {
    /// "Do you hold these contents?" — asked of a trusted device before this one deletes
    /// anything (`lfsync offload`) or fetches a repair from it. With `nonces`, it is a
    /// challenge: the holder must re-read each content it claims and answer with a keyed
    /// hash of its bytes under that content's fresh nonce (PROTOCOL.md, "Holding checks"),
    /// which the asker, who still has the bytes, checks itself.
    package struct HoldingCheck: WireMessagePayload {
        static let messageType = WireMessageType.holdingCheck
        /// Contents one check may name; a larger question is asked in several checks.
        package static let maxContents = 1024
        /// Bytes of content one check with proof may make the holder read, unless it names a
        /// single content (one video may be larger): 64 GiB. A larger question is asked in
        /// several checks; a holder answers one over it with Error 5.
        package static let maxProofBytes: UInt64 = 64 << 30

        package var requestID: UInt64
        package var contents: [ContentID]
        /// One per content, in order, when the asker wants proof; empty otherwise.
        package var nonces: [Hash256]

        package var wantsProof: Bool { !nonces.isEmpty }

        package init(requestID: UInt64, contents: [ContentID], nonces: [Hash256] = []) {
            self.requestID = requestID
            self.contents = contents
            self.nonces = nonces
        }

        func encode(into writer: inout ByteWriter) throws(WireError) {
            try Self.checking { () throws(ByteReaderError) in
                guard !contents.isEmpty, contents.count <= Self.maxContents else {
                    throw .countOverLimit(count: contents.count, limit: Self.maxContents)
                }
                guard nonces.isEmpty || nonces.count == contents.count else { throw .invalidValue("one nonce per content, or none") }
                guard Set(contents).count == contents.count else { throw .invalidValue("a content named twice in one holding check") }
            }
            writer.write(requestID)
            writer.write(UInt8(wantsProof ? 1 : 0))
            writer.write(UInt16(contents.count))
            for (index, content) in contents.enumerated() {
                writer.write(content.hash)
                if wantsProof { writer.write(nonces[index]) }
            }
        }

        init(from reader: inout ByteReader) throws(WireError) {
            (requestID, contents, nonces) = try Self.decoding { () throws(ByteReaderError) in
                let requestID = try reader.readUInt64()
                let proof: Bool = switch try reader.readUInt8() {
                case 0: false
                case 1: true
                case let other: throw ByteReaderError.invalidValue("holding check proof flag \(other)")
                }
                let count = Int(try reader.readUInt16())
                guard count >= 1, count <= Self.maxContents else { throw .countOverLimit(count: count, limit: Self.maxContents) }
                var contents: [ContentID] = []
                var nonces: [Hash256] = []
                var named = Set<ContentID>()
                contents.reserveCapacity(count)
                for _ in 0..<count {
                    let content = ContentID(hash: try reader.readHash())
                    // Each named once: a content listed a thousand times would cost a thousand
                    // reads of its bytes with proof.
                    guard named.insert(content).inserted else { throw .invalidValue("content \(content.hash.shortHex) named twice in one holding check") }
                    contents.append(content)
                    if proof { nonces.append(try reader.readHash()) }
                }
                return (requestID, contents, nonces)
            }
        }
    }
}
