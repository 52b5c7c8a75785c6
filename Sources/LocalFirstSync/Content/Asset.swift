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

    /// Ordered: primary, raw, Live Photo video, sidecars; ties by path.
    public let files: [File]
    public let contentID: ContentID

    public var id: ContentID { contentID }

    public init(files: [File]) {
        self.files = files.sorted { ($0.role.sortRank, $0.manifest.path) < ($1.role.sortRank, $1.manifest.path) }
        contentID = ContentID(files: files.map { ($0.role, $0.manifest.fileHash) })
    }

    public var totalSize: UInt64 { files.reduce(0) { $0 + $1.manifest.size } }

    public var kind: AssetKind {
        let roles = Set(files.map(\.role))
        if roles.contains(.livePhotoVideo) { return .livePhoto }
        if roles.contains(.raw) { return roles.contains(.primary) ? .rawPlusJPEG : .raw }
        guard let primary = files.first(where: { $0.role == .primary }) else { return .other }
        return AssetKind(forPrimaryPath: primary.manifest.path)
    }
}

extension Asset {
    public enum Limits {
        public static let maxFilesPerAsset = 64
    }

    /// Canonical binary form (PROTOCOL.md, "Asset"): u16 file count, then per file u8 role + manifest.
    public func encode(into writer: inout ByteWriter) {
        writer.write(UInt16(files.count))
        for file in files {
            writer.write(file.role.rawValue)
            file.manifest.encode(into: &writer)
        }
    }

    public init(from reader: inout ByteReader) throws(ByteReaderError) {
        let count = Int(try reader.readUInt16())
        guard count > 0, count <= Limits.maxFilesPerAsset else { throw .countOverLimit(count: count, limit: Limits.maxFilesPerAsset) }
        var files = [File]()
        for _ in 0..<count {
            let rawRole = try reader.readUInt8()
            guard let role = FileRole(rawValue: rawRole) else { throw .invalidValue("file role \(rawRole)") }
            files.append(File(role: role, manifest: try FileManifest(from: &reader)))
        }
        self.init(files: files)
    }
}

/// A human label for listings; not part of any identity.
public enum AssetKind: String, Sendable, Codable {
    case photo, livePhoto, rawPlusJPEG, raw, video, other

    init(forPrimaryPath path: String) {
        switch MediaType(path: path) {
        case .stillImage: self = .photo
        case .video: self = .video
        case .raw: self = .raw
        default: self = .other
        }
    }
}
