import LFSyncContent
import LFSyncSystem

extension WireMessage {
    /// Asks a peer that trusts us to pull to offer these contents, whatever its ledger says
    /// this device holds: what `lfsync pull` sends for assets this device offloaded
    /// (their holders' ledgers still say it has them). Answered like a Pull, with one push,
    /// of the named contents the peer holds.
    package struct Fetch: WireMessagePayload {
        static let messageType = WireMessageType.fetch
        /// Contents one Fetch may name (32 KiB of IDs); more are asked for in several.
        package static let maxContents = 1024

        package var requestID: UInt64
        package var contents: [ContentID]

        package init(requestID: UInt64, contents: [ContentID]) {
            self.requestID = requestID
            self.contents = contents
        }

        func encode(into writer: inout ByteWriter) throws(WireError) {
            try Self.checking { () throws(ByteReaderError) in
                guard !contents.isEmpty, contents.count <= Self.maxContents else {
                    throw .countOverLimit(count: contents.count, limit: Self.maxContents)
                }
            }
            writer.write(requestID)
            writer.write(UInt16(contents.count))
            for content in contents { writer.write(content.hash) }
        }

        init(from reader: inout ByteReader) throws(WireError) {
            (requestID, contents) = try Self.decoding { () throws(ByteReaderError) in
                let requestID = try reader.readUInt64()
                let count = Int(try reader.readUInt16())
                guard count >= 1, count <= Self.maxContents else { throw .countOverLimit(count: count, limit: Self.maxContents) }
                var contents: [ContentID] = []
                contents.reserveCapacity(count)
                for _ in 0..<count { contents.append(ContentID(hash: try reader.readHash())) }
                return (requestID, contents)
            }
        }
    }
}
