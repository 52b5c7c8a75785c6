extension WireMessage {
    /// The receiver's consent decision on an offer, and if it accepts, exactly
    /// which chunks to send. Chunks it already has — anywhere in its library
    /// or staging — are left out; an accepted asset with no entry needs no
    /// data at all, and the sender simply waits for its Receipt.
    public struct OfferReply: WireMessagePayload {
        public static let maxReasonBytes = 256
        static let messageType = WireMessageType.offerReply

        public var offerID: UInt64
        public var accepted: Bool
        /// Why it was declined ("not enough free space: 12 GB needed, 3 GB free").
        public var reason: String?
        /// Empty when declined. At most one entry per asset of the offer.
        public var needed: [NeededChunks]

        public init(offerID: UInt64, accepted: Bool, reason: String? = nil, needed: [NeededChunks] = []) {
            self.offerID = offerID
            self.accepted = accepted
            self.reason = reason
            self.needed = needed
        }

        func encode(into writer: inout ByteWriter) throws(WireError) {
            try Self.checking { () throws(ByteReaderError) in
                if let reason { try WireText.validate(reason, limit: Self.maxReasonBytes, field: "reason") }
                for entry in needed { try entry.validate() }
                try Self.validate(accepted: accepted, needed: needed)
            }
            writer.write(offerID)
            writer.writeWireBool(accepted)
            writer.writeOptionalWireText(reason)
            writer.write(UInt32(needed.count))
            for entry in needed {
                entry.encode(into: &writer)
            }
        }

        init(from reader: inout ByteReader) throws(WireError) {
            (offerID, accepted, reason, needed) = try Self.decoding { () throws(ByteReaderError) in
                let offerID = try reader.readUInt64()
                let accepted = try reader.readWireBool(field: "accepted")
                let reason = try reader.readOptionalWireText(limit: Self.maxReasonBytes, field: "reason")
                let count = try reader.readCount(limit: Offer.maxAssets)
                guard count <= reader.remaining / NeededChunks.minimumEncodedLength else {
                    throw .truncated(needed: count * NeededChunks.minimumEncodedLength, available: reader.remaining)
                }
                var needed = [NeededChunks]()
                needed.reserveCapacity(count)
                for _ in 0..<count {
                    needed.append(try NeededChunks(from: &reader))
                }
                try Self.validate(accepted: accepted, needed: needed)
                return (offerID, accepted, reason, needed)
            }
        }

        static func validate(accepted: Bool, needed: [NeededChunks]) throws(ByteReaderError) {
            guard accepted || needed.isEmpty else { throw .invalidValue("a declined offer lists needed chunks") }
            guard needed.count <= Offer.maxAssets else { throw .countOverLimit(count: needed.count, limit: Offer.maxAssets) }
            var seen = Set<ContentID>()
            seen.reserveCapacity(needed.count)
            for entry in needed {
                guard seen.insert(entry.contentID).inserted else {
                    throw .invalidValue("asset \(entry.contentID.hash.shortHex) listed twice")
                }
            }
        }
    }
}
