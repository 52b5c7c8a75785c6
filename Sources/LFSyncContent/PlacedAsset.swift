/// One asset's content and the places it stands in a library.
///
/// The same bytes often stand at several paths: an exported copy, a `Backup/`
/// folder, a hard link, two empty files. Content is addressed once (one
/// content ID, one ledger row per peer, one transfer), but every placement is
/// honoured: the receiver ends with a copy at each path. Each placement is an
/// `Asset` of the same content — same roles, file hashes and chunk lists, in
/// the same canonical order — so a file index names the same bytes in all of
/// them.
package struct PlacedAsset: Hashable, Sendable {
    public let contentID: ContentID
    /// Never empty; in the order given (the scanner's: ascending primary path).
    public let placements: [Asset]

    /// `nil` unless `placements` is non-empty and every placement has the same
    /// content, file for file.
    public init?(placements: [Asset]) {
        guard let first = placements.first else { return nil }
        for other in placements.dropFirst() {
            guard other.contentID == first.contentID, other.files.count == first.files.count,
                  zip(other.files, first.files).allSatisfy({ $0.hasSameContent(as: $1) })
            else { return nil }
        }
        contentID = first.contentID
        self.placements = placements
    }

    /// The content's files (role, size, hash, chunks) as the first placement has them.
    public var files: [Asset.File] { placements[0].files }

    /// Bytes of one copy of the content.
    public var contentSize: UInt64 { placements[0].totalSize }

    /// Bytes of every placement together: what the receiver's library gains.
    public var placedSize: UInt64 { contentSize * UInt64(placements.count) }

    /// Files over all placements.
    public var placedFileCount: Int { files.count * placements.count }

    /// Groups `assets` by content: one `PlacedAsset` per content ID, in the
    /// order each content first appears, its placements in their given order.
    /// Assets whose content ID matches but whose files do not (a hash collision
    /// is not a real possibility; a hand-built asset is) stay apart.
    public static func grouping(_ assets: [Asset]) -> [PlacedAsset] {
        var order: [ContentID] = []
        var byContent: [ContentID: [[Asset]]] = [:]
        for asset in assets {
            if var groups = byContent[asset.contentID] {
                if let index = groups.firstIndex(where: { PlacedAsset(placements: [$0[0], asset]) != nil }) {
                    groups[index].append(asset)
                } else {
                    groups.append([asset])
                }
                byContent[asset.contentID] = groups
            } else {
                order.append(asset.contentID)
                byContent[asset.contentID] = [[asset]]
            }
        }
        return order.flatMap { id in (byContent[id] ?? []).compactMap { PlacedAsset(placements: $0) } }
    }
}

extension Asset.File {
    /// Same role and same bytes, wherever each stands.
    package func hasSameContent(as other: Asset.File) -> Bool {
        role == other.role && manifest.fileHash == other.manifest.fileHash
            && manifest.size == other.manifest.size && manifest.chunks == other.manifest.chunks
    }
}
