import LFSyncSystem

extension WireMessage {
    /// Asks a peer that trusts us to offer what it has and we lack. The peer
    /// answers with one push of its choosing; the puller can only narrow it,
    /// with its own ignore rules (gitignore lines, applied by the serving side
    /// after its own), so that what the puller would never keep never crosses
    /// the link.
    package struct Pull: WireMessagePayload {
        static let messageType = WireMessageType.pull
        /// Bounds on what a puller may ask the serving side to match.
        package static let maxExcludes = 1000
        package static let maxExcludeBytes = 4096

        package var requestID: UInt64
        package var excludes: [String]

        package init(requestID: UInt64, excludes: [String] = []) {
            self.requestID = requestID
            self.excludes = excludes
        }

        func encode(into writer: inout ByteWriter) throws(WireError) {
            guard excludes.count <= Self.maxExcludes,
                  excludes.allSatisfy({ $0.utf8.count <= Self.maxExcludeBytes }) else {
                throw .unencodable(.pull, "more than \(Self.maxExcludes) exclude patterns, or one longer than \(Self.maxExcludeBytes) bytes")
            }
            writer.write(requestID)
            writer.write(UInt16(excludes.count))
            for pattern in excludes { writer.writeString(pattern) }
        }

        init(from reader: inout ByteReader) throws(WireError) {
            (requestID, excludes) = try Self.decoding { () throws(ByteReaderError) in
                let requestID = try reader.readUInt64()
                let count = Int(try reader.readUInt16())
                guard count <= Self.maxExcludes else { throw .countOverLimit(count: count, limit: Self.maxExcludes) }
                var excludes: [String] = []
                for _ in 0..<count { excludes.append(try reader.readString(limit: Self.maxExcludeBytes)) }
                return (requestID, excludes)
            }
        }
    }
}
