import Foundation

/// A unit that travels and lands whole: a photo, a Live Photo (still + video),
/// a RAW+JPEG pair, each with its sidecars.
public struct Asset: Hashable, Sendable, Identifiable {
    public struct File: Hashable, Sendable {
        public var role: FileRole
        public var manifest: FileManifest

        public init(role: FileRole, manifest: FileManifest) {
            self.role = role
            self.manifest = manifest
        }
    }

    /// In canonical order: ascending role byte (primary, Live Photo video,
    /// raw, sidecars), then file hash, then path bytes. The order depends on
    /// content first, so every placement of the same content lists its files
    /// alike: a file's position (its `fileIndex` on the wire) names the same
    /// bytes whichever copy of the asset is meant. The path breaks ties only
    /// between identical files, where the choice cannot matter.
    public let files: [File]
    public let contentID: ContentID
    /// The library a scan found it in (its files' paths start there): what lets an app
    /// send an asset without saying where it lives. Nil for an asset made by hand or
    /// received. Not part of its identity: the same files in two libraries are equal.
    public internal(set) var library: URL?

    public var id: ContentID { contentID }

    public static func == (lhs: Asset, rhs: Asset) -> Bool {
        lhs.contentID == rhs.contentID && lhs.files == rhs.files
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(contentID)
        hasher.combine(files)
    }

    /// The same asset, found in `library`.
    package func found(in library: URL) -> Asset {
        var copy = self
        copy.library = library
        return copy
    }

    public init(files: [File]) {
        self.files = files.sorted(by: Self.canonicalOrder)
        contentID = ContentID(files: files.map { ($0.role, $0.manifest.fileHash) })
    }

    /// For a decoder that has checked the order and computed the content ID
    /// once for many placements of one content.
    package init(canonicallyOrdered files: [File], contentID: ContentID) {
        self.files = files
        self.contentID = contentID
    }

    /// The canonical file order (see `files`).
    package static func canonicalOrder(_ lhs: File, _ rhs: File) -> Bool {
        if lhs.role != rhs.role { return lhs.role.rawValue < rhs.role.rawValue }
        if lhs.manifest.fileHash != rhs.manifest.fileHash { return lhs.manifest.fileHash < rhs.manifest.fileHash }
        return lhs.manifest.path < rhs.manifest.path
    }

    /// The path of the primary file: what names the asset to people.
    public var primaryPath: RelativePath {
        (files.first { $0.role == .primary } ?? files[0]).manifest.path
    }

    public var totalSize: UInt64 { files.reduce(0) { $0 + $1.manifest.size } }

    public var kind: AssetKind {
        let roles = Set(files.map(\.role))
        if roles.contains(.livePhotoVideo) { return .livePhoto }
        if roles.contains(.raw) { return roles.contains(.primary) ? .rawPlusJPEG : .raw }
        guard let primary = files.first(where: { $0.role == .primary }) else { return .other }
        return AssetKind(forPrimaryPath: primary.manifest.path.string)
    }
}

extension Asset {
    public enum Limits {
        public static let maxFilesPerAsset = 64
    }
}

/// A human label for listings; not part of any identity.
public enum AssetKind: String, Sendable, Codable {
    case photo, livePhoto, rawPlusJPEG, raw, video, other

    package init(forPrimaryPath path: String) {
        switch MediaType(path: path) {
        case .stillImage: self = .photo
        case .video: self = .video
        case .raw: self = .raw
        default: self = .other
        }
    }
}
