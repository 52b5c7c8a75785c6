/// Decides which library files travel and land together as one asset.
///
/// Rules (ARCHITECTURE.md, "Content model"), applied per directory — files in different
/// directories never pair:
/// 1. Live Photo by metadata: a still and a video with the same Apple content
///    identifier, whatever their names. Several with one identifier pair in
///    path order; leftovers stay alone.
/// 2. Live Photo by basename (IMG_0001.HEIC + img_0001.MOV), only for the
///    formats Apple (and exports of Apple libraries) use, only between files
///    not already paired, and never when both carry different identifiers.
/// 3. RAW + JPEG/HEIC with the same stem: the still stays primary, the RAW
///    joins with role `.raw`. A RAW without a companion is its own primary.
/// 4. Sidecars: `X.ext.xmp` / `X.ext.aae` join the asset holding the file
///    `X.ext`; otherwise `X.xmp` / `X.AAE` join the asset whose primary (or
///    RAW) has stem X. An unclaimed sidecar is its own primary.
/// 5. Everything else is a single-file asset.
///
/// Stems compare case-insensitively, names otherwise by their bytes. The
/// output is deterministic: members in `GroupedAsset` order, assets sorted by
/// primary path bytes.
package enum AssetGrouper {
    /// Stills that can be the photo of a Live Photo when pairing by name.
    package static let livePhotoStillExtensions: Set<String> = ["heic", "heif", "jpg", "jpeg"]
    /// Videos that can be the motion of a Live Photo when pairing by name
    /// (iOS writes .MOV; exports such as Google Takeout use .MP4).
    package static let livePhotoVideoExtensions: Set<String> = ["mov", "mp4"]
    /// Stills a camera writes next to a RAW.
    package static let rawCompanionExtensions: Set<String> = ["jpg", "jpeg", "heic", "heif"]

    package static func group(_ candidates: [GroupingCandidate]) -> [GroupedAsset] {
        var seenPaths = Set<RelativePath>()
        var filesByDirectory: [RelativePath: [GroupingFile]] = [:]
        for candidate in candidates where seenPaths.insert(candidate.path).inserted {
            let file = GroupingFile(candidate)
            filesByDirectory[file.directory, default: []].append(file)
        }
        var assets: [GroupedAsset] = []
        for files in filesByDirectory.values {
            assets += DirectoryGrouping.assets(of: files)
        }
        return assets.sorted { $0.primaryPath < $1.primaryPath }
    }
}
