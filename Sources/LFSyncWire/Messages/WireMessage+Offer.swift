import LFSyncContent
import LFSyncCrypto
import LFSyncSystem

extension WireMessage {
    /// "I would like to send you these assets": each asset's content once —
    /// roles, sizes and chunk lists (a file's hash is made from its chunk list), so the receiver can work out
    /// which chunks it already has anywhere — and every path it should stand at.
    ///
    /// A push of any size travels as a sequence of offers under one consent
    /// (`push`): the receiver asks its person once, on the first offer, and the
    /// answer covers the rest. Each offer is answered, and its assets receipted,
    /// on its own, so a sender streams a library of any size with a bounded
    /// number of offers outstanding.
    package struct Offer: WireMessagePayload {
        /// Assets (distinct contents) in one offer.
        package static let maxAssets = 10_000
        /// Files over all placements of all assets in one offer.
        package static let maxPlacedFiles = 100_000
        static let messageType = WireMessageType.offer

        /// Chosen by the sender, unique per connection; echoed by every
        /// message about this offer.
        package var offerID: UInt64
        package var push: PushHeader
        /// Content IDs are unique in an offer; paths are unique over all placements.
        package var assets: [PlacedAsset]

        package init(offerID: UInt64, push: PushHeader, assets: [PlacedAsset]) {
            self.offerID = offerID
            self.push = push
            self.assets = assets
        }

        /// A push of exactly one offer (tests, small sends).
        package init(offerID: UInt64, assets: [PlacedAsset]) {
            let files = assets.reduce(0) { $0 + UInt64($1.placedFileCount) }
            let bytes = assets.reduce(0) { $0 + $1.placedSize }
            self.init(offerID: offerID, push: PushHeader(pushID: offerID, isLast: true, fileCount: files, byteCount: bytes), assets: assets)
        }

        /// Fixed fields before the assets: offerID, the push header, asset count.
        package static let headerLength = 8 + PushHeader.wireLength + 4

        func encode(into writer: inout ByteWriter) throws(WireError) {
            try Self.checking { () throws(ByteReaderError) in try Self.validate(assets) }
            writer.write(offerID)
            push.encode(into: &writer)
            writer.write(UInt32(assets.count))
            for asset in assets {
                asset.encode(into: &writer)
            }
        }

        init(from reader: inout ByteReader) throws(WireError) {
            (offerID, push, assets) = try Self.decoding { () throws(ByteReaderError) in
                let offerID = try reader.readUInt64()
                let push = try PushHeader(from: &reader)
                let count = try reader.readCount(limit: Self.maxAssets)
                // A lying count cannot make us reserve more than the payload could hold.
                guard count <= reader.remaining / PlacedAsset.minimumWireLength else {
                    throw .truncated(needed: count * PlacedAsset.minimumWireLength, available: reader.remaining)
                }
                var assets = [PlacedAsset]()
                assets.reserveCapacity(count)
                var placedFiles = 0
                for _ in 0..<count {
                    let asset = try PlacedAsset(from: &reader, placedFileBudget: Self.maxPlacedFiles - placedFiles)
                    placedFiles += asset.placedFileCount
                    assets.append(asset)
                }
                try Self.validate(assets)
                return (offerID, push, assets)
            }
        }

        /// Rules across assets: content IDs are unique (replies and receipts
        /// name assets by them), paths are unique over every placement (bytes
        /// compared), and the placed files stay within the offer's limit. The
        /// rules inside one asset are checked by its decoder (and hold by
        /// construction for a `PlacedAsset` built from scanned assets).
        static func validate(_ assets: [PlacedAsset]) throws(ByteReaderError) {
            guard assets.count <= maxAssets else { throw .countOverLimit(count: assets.count, limit: maxAssets) }
            let placedFiles = assets.reduce(0) { $0 + $1.placedFileCount }
            guard placedFiles <= maxPlacedFiles else { throw .countOverLimit(count: placedFiles, limit: maxPlacedFiles) }
            var seen = Set<ContentID>()
            seen.reserveCapacity(assets.count)
            var paths = Set<RelativePath>()
            paths.reserveCapacity(placedFiles)
            for asset in assets {
                guard seen.insert(asset.contentID).inserted else {
                    throw .invalidValue("asset \(asset.contentID.hash.shortHex) offered twice")
                }
                for placement in asset.placements {
                    for file in placement.files {
                        guard file.manifest.path.utf8Count <= FileManifest.Limits.maxPathBytes else {
                            throw .lengthOverLimit(length: file.manifest.path.utf8Count, limit: FileManifest.Limits.maxPathBytes)
                        }
                        guard paths.insert(file.manifest.path).inserted else {
                            throw .invalidValue("path offered twice: \(PrintablePath.escape(file.manifest.path.string))")
                        }
                    }
                }
            }
        }
    }

    /// Which push an offer belongs to, and what the whole push holds.
    package struct PushHeader: Hashable, Sendable {
        /// The `offerID` of the push's first offer (equal to it on that offer).
        package var pushID: UInt64
        /// No further offer of this push follows.
        package var isLast: Bool
        /// Files (over every placement) and bytes in the whole push, as the
        /// sender counted them: shown in the consent prompt, not a promise.
        package var fileCount: UInt64
        package var byteCount: UInt64
        /// A SyncRequest follows the push (flag bit 1, only to a peer that announced path
        /// versions): the receiver places only files at paths its history does not know and
        /// nothing stands at; the sync applies the rest (PROTOCOL.md, "Syncing").
        package var syncFollows: Bool

        package init(pushID: UInt64, isLast: Bool, fileCount: UInt64, byteCount: UInt64, syncFollows: Bool = false) {
            self.pushID = pushID
            self.isLast = isLast
            self.fileCount = fileCount
            self.byteCount = byteCount
            self.syncFollows = syncFollows
        }

        static let wireLength = 8 + 1 + 8 + 8

        func encode(into writer: inout ByteWriter) {
            writer.write(pushID)
            writer.write((isLast ? UInt8(1) : 0) | (syncFollows ? 2 : 0))
            writer.write(fileCount)
            writer.write(byteCount)
        }

        init(from reader: inout ByteReader) throws(ByteReaderError) {
            pushID = try reader.readUInt64()
            let flags = try reader.readUInt8()
            guard flags & ~3 == 0 else { throw .invalidValue("push flags \(flags)") }
            isLast = flags & 1 == 1
            syncFollows = flags & 2 == 2
            fileCount = try reader.readUInt64()
            byteCount = try reader.readUInt64()
        }
    }
}

extension PlacedAsset {
    /// u16 file count, one chunkless file (u8 role, u64 size, 32-byte hash,
    /// u32 chunk count), u32 placement count, one placement of it (u16 empty
    /// path, i64 mtime, u16 mode).
    package static let minimumWireLength = 2 + (1 + 8 + 4) + 4 + placedFileMinimumLength

    /// A PlacedFile with an empty path: u16 length, i64 mtime, u16 mode.
    package static let placedFileMinimumLength = 2 + 8 + 2

    /// Exactly `encode(into:)`'s output length, computed without encoding.
    package var wireLength: Int {
        placements.reduce(contentWireLength) { $0 + Self.wireLength(of: $1) }
    }

    /// The encoding's length without any placement: the files and the placement count.
    package var contentWireLength: Int {
        files.reduce(2 + 4) { $0 + 1 + 8 + 4 + $1.manifest.chunks.count * 36 }
    }

    /// What one placement adds to the encoding.
    package static func wireLength(of placement: Asset) -> Int {
        placement.files.reduce(0) { $0 + placedFileMinimumLength + $1.manifest.path.utf8Count }
    }

    /// PROTOCOL.md, "Offer": the content's files once, then each placement's
    /// paths and modification times in the same file order. Checks nothing (the
    /// offer's encoder does): a conformance or hostile-peer client uses it to
    /// put assets on the wire that lfsync itself would refuse to send.
    package func encode(into writer: inout ByteWriter) {
        writer.write(UInt16(files.count))
        for file in files {
            writer.write(file.role.rawValue)
            writer.write(file.manifest.size)
            writer.write(UInt32(file.manifest.chunks.count))
            for chunk in file.manifest.chunks {
                writer.write(chunk.length)
                writer.write(chunk.hash)
            }
        }
        writer.write(UInt32(placements.count))
        for placement in placements {
            for file in placement.files {
                writer.writeString(file.manifest.path.string)
                writer.write(file.manifest.modificationTimeNs)
                writer.write(UInt16(truncatingIfNeeded: file.manifest.permissions & 0o7777))
            }
        }
    }

    /// Decodes and validates one asset: files in canonical order (ascending
    /// role byte, then file hash; two files with the same role and hash must
    /// be the same file), chunk lists that add up to their sizes, at least one
    /// placement, and inside a placement, tied files listed by ascending path
    /// bytes — so that every valid asset has exactly one encoding.
    package init(from reader: inout ByteReader, placedFileBudget: Int) throws(ByteReaderError) {
        let fileCount = Int(try reader.readUInt16())
        guard fileCount > 0, fileCount <= Asset.Limits.maxFilesPerAsset else {
            throw .countOverLimit(count: fileCount, limit: Asset.Limits.maxFilesPerAsset)
        }
        var contents: [(role: FileRole, size: UInt64, fileHash: Hash256, chunks: [ChunkRef])] = []
        contents.reserveCapacity(fileCount)
        for _ in 0..<fileCount {
            let rawRole = try reader.readUInt8()
            guard let role = FileRole(rawValue: rawRole) else { throw .invalidValue("file role \(rawRole)") }
            let size = try reader.readUInt64()
            let chunks = try FileManifest.readChunkList(from: &reader, size: size)
            // Not on the wire: made here from the chunk list, as the sender made it.
            let fileHash = ContentHash.file(chunks: chunks)
            if let previous = contents.last {
                guard (previous.role.rawValue, previous.fileHash) <= (role.rawValue, fileHash) else {
                    throw .invalidValue("files not in canonical order (role, then file hash)")
                }
                if previous.role == role, previous.fileHash == fileHash {
                    guard previous.size == size, previous.chunks == chunks else {
                        throw .invalidValue("two files with hash \(fileHash.shortHex) describe different bytes")
                    }
                }
            }
            contents.append((role, size, fileHash, chunks))
        }
        let placementCount = try reader.readCount(limit: .max)
        guard placementCount > 0 else { throw .invalidValue("asset without a placement") }
        guard placementCount <= placedFileBudget / fileCount else {
            throw .countOverLimit(count: placementCount * fileCount, limit: placedFileBudget)
        }
        guard placementCount <= reader.remaining / (fileCount * Self.placedFileMinimumLength) else {
            throw .truncated(needed: placementCount * fileCount * Self.placedFileMinimumLength, available: reader.remaining)
        }
        let contentID = ContentID(files: contents.map { ($0.role, $0.fileHash) })
        var placements: [Asset] = []
        placements.reserveCapacity(placementCount)
        for _ in 0..<placementCount {
            var files: [Asset.File] = []
            files.reserveCapacity(fileCount)
            for content in contents {
                let path = RelativePath(try reader.readString(limit: FileManifest.Limits.maxPathBytes))
                let modificationTimeNs = try reader.readInt64()
                let mode = try reader.readUInt16()
                guard mode & ~0o7777 == 0 else { throw .invalidValue("file mode \(String(mode, radix: 8)) has bits beyond 0o7777") }
                if let previous = files.last, previous.role == content.role, previous.manifest.fileHash == content.fileHash {
                    guard previous.manifest.path < path else {
                        throw .invalidValue("identical files of a placement not in path order")
                    }
                }
                files.append(Asset.File(role: content.role, manifest: FileManifest(
                    path: path, size: content.size, modificationTimeNs: modificationTimeNs,
                    derivedFileHash: content.fileHash, chunks: content.chunks, permissions: UInt32(mode))))
            }
            placements.append(Asset(canonicallyOrdered: files, contentID: contentID))
        }
        // Equal content by construction: every placement was built from `contents`.
        guard let asset = PlacedAsset(placements: placements) else { throw .invalidValue("inconsistent placements") }
        self = asset
    }
}
