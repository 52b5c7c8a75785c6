import LFSyncContent
import LFSyncSystem

extension WireMessage {
    /// The receiver's answer to an offer, and if it accepts, exactly which
    /// chunks to send. Chunks it already has — anywhere in its library or
    /// staging, or in a file of this push already on its way — are left out;
    /// an accepted asset with no entry needs no data from this entry, and the
    /// sender simply waits for its Receipt.
    package struct OfferReply: WireMessagePayload {
        package static let maxReasonBytes = 256
        static let messageType = WireMessageType.offerReply

        /// Declined and refused are different news for the person sending:
        /// the first is the other side's choice (trust it, or ask its owner),
        /// the second a problem there (no room, a disk error, a name it must
        /// not write) that trust cannot fix.
        package enum Decision: UInt8, Hashable, Sendable {
            case accepted = 0
            /// Its person said no, did not answer in time, or the sender is not trusted with offers.
            case declined = 1
            /// The receiver cannot take it: `reason` says why.
            case refused = 2
        }

        package var offerID: UInt64
        package var decision: Decision
        /// Why it was declined or refused ("not enough free space: …").
        package var reason: String?
        /// Empty unless accepted. At most one entry per asset of the offer.
        package var needed: [NeededChunks]

        package var accepted: Bool { decision == .accepted }

        package init(offerID: UInt64, decision: Decision, reason: String? = nil, needed: [NeededChunks] = []) {
            self.offerID = offerID
            self.decision = decision
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
            writer.write(decision.rawValue)
            writer.writeOptionalWireText(reason)
            writer.write(UInt32(needed.count))
            for entry in needed {
                entry.encode(into: &writer)
            }
        }

        init(from reader: inout ByteReader) throws(WireError) {
            (offerID, decision, reason, needed) = try Self.decoding { () throws(ByteReaderError) in
                let offerID = try reader.readUInt64()
                let rawDecision = try reader.readUInt8()
                guard let decision = Decision(rawValue: rawDecision) else { throw ByteReaderError.invalidValue("decision \(rawDecision)") }
                let accepted = decision == .accepted
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
                return (offerID, decision, reason, needed)
            }
        }

        static func validate(accepted: Bool, needed: [NeededChunks]) throws(ByteReaderError) {
            guard accepted || needed.isEmpty else { throw .invalidValue("an offer not accepted lists needed chunks") }
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
