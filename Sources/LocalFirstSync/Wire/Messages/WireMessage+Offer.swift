extension WireMessage {
    /// "I would like to send you these assets": their complete manifests, so
    /// the receiver can work out which chunks it already has anywhere.
    ///
    /// An offer carries at most `maxAssets` assets and must fit one frame
    /// (`WireProtocol.maxPayloadLength`); a sender with a large library splits
    /// it into several offers with `Offer.batches(of:)`, each consented to and
    /// answered on its own. Inside an asset, files keep their canonical order,
    /// and a file's position in that order is the `fileIndex` used by
    /// OfferReply and Chunk.
    public struct Offer: WireMessagePayload {
        public static let maxAssets = 100_000
        static let messageType = WireMessageType.offer

        /// Chosen by the sender, unique per connection; echoed by every
        /// message about this offer.
        public var offerID: UInt64
        public var assets: [Asset]

        public init(offerID: UInt64, assets: [Asset]) {
            self.offerID = offerID
            self.assets = assets
        }

        /// Splits `assets` into consecutive groups that each make an offer
        /// within the asset and payload limits. Throws if one asset alone is
        /// too large for an offer (a manifest of several hundred thousand chunks).
        public static func batches(
            of assets: [Asset], maxAssets: Int = Offer.maxAssets, maxPayloadLength: Int = WireProtocol.maxPayloadLength
        ) throws(WireError) -> [[Asset]] {
            precondition(maxAssets > 0)
            let fixed = 8 + 4
            var batches: [[Asset]] = []
            var current: [Asset] = []
            var size = fixed
            for asset in assets {
                let length = asset.wireLength
                guard fixed + length <= maxPayloadLength else {
                    throw .unencodable(messageType, "asset \(asset.contentID.hash.shortHex) needs \(length) bytes, over the offer limit of \(maxPayloadLength)")
                }
                if current.count == maxAssets || size + length > maxPayloadLength {
                    batches.append(current)
                    current = []
                    size = fixed
                }
                current.append(asset)
                size += length
            }
            if !current.isEmpty { batches.append(current) }
            return batches
        }

        func encode(into writer: inout ByteWriter) throws(WireError) {
            guard assets.count <= Self.maxAssets else {
                throw .unencodable(Self.messageType, "\(assets.count) assets, over the limit of \(Self.maxAssets)")
            }
            try Self.checking { () throws(ByteReaderError) in try Self.validate(assets) }
            writer.write(offerID)
            writer.write(UInt32(assets.count))
            for asset in assets {
                asset.encode(into: &writer)
            }
        }

        init(from reader: inout ByteReader) throws(WireError) {
            (offerID, assets) = try Self.decoding { () throws(ByteReaderError) in
                let offerID = try reader.readUInt64()
                let count = try reader.readCount(limit: Self.maxAssets)
                // A lying count cannot make us reserve more than the payload could hold.
                guard count <= reader.remaining / Asset.minimumWireLength else {
                    throw .truncated(needed: count * Asset.minimumWireLength, available: reader.remaining)
                }
                var assets = [Asset]()
                assets.reserveCapacity(count)
                for _ in 0..<count {
                    assets.append(try Asset(from: &reader))
                }
                try Self.validate(assets)
                return (offerID, assets)
            }
        }

        /// Rules beyond the asset encoding: content IDs are unique in an offer
        /// (replies and receipts name assets by them), and paths are unique in
        /// an asset (so the canonical file order, hence `fileIndex`, is unambiguous).
        static func validate(_ assets: [Asset]) throws(ByteReaderError) {
            var seen = Set<ContentID>()
            seen.reserveCapacity(assets.count)
            for asset in assets {
                guard seen.insert(asset.contentID).inserted else {
                    throw .invalidValue("asset \(asset.contentID.hash.shortHex) offered twice")
                }
                guard asset.files.count <= Asset.Limits.maxFilesPerAsset else {
                    throw .countOverLimit(count: asset.files.count, limit: Asset.Limits.maxFilesPerAsset)
                }
                guard !asset.files.isEmpty else { throw .invalidValue("asset without files") }
                guard Set(asset.files.map(\.manifest.path)).count == asset.files.count else {
                    throw .invalidValue("asset \(asset.contentID.hash.shortHex) lists a path twice")
                }
                for file in asset.files {
                    guard file.manifest.path.utf8.count <= FileManifest.Limits.maxPathBytes,
                          file.manifest.chunks.count <= FileManifest.Limits.maxChunkCount
                    else { throw .invalidValue("file manifest over the limits") }
                }
            }
        }
    }
}

extension Asset {
    /// u16 file count + one file of u8 role and an empty-path, chunkless manifest
    /// (u8 version, u16 path length, u64 size, i64 mtime, 32-byte hash, u32 chunk count).
    static let minimumWireLength = 2 + 1 + (1 + 2 + 8 + 8 + 32 + 4)

    /// Exactly `encode(into:)`'s output length, computed without encoding.
    var wireLength: Int {
        files.reduce(2) { total, file in
            total + 1 + (1 + 2 + 8 + 8 + 32 + 4) + file.manifest.path.utf8.count + file.manifest.chunks.count * 36
        }
    }
}
