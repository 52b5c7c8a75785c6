/// Applies `AssetGrouper`'s rules to the files of one directory.
///
/// Works on indices into the path-sorted file list, so every "first" below is
/// the first by path and the result does not depend on input order.
struct DirectoryGrouping {
    /// Sorted by path.
    private let files: [GroupingFile]
    /// For each of `files`, its position in the caller's list.
    private let inputIndex: [Int]
    /// The index of the file heading the asset this file joined; nil for heads.
    private var owner: [Int?]
    private var role: [FileRole]
    /// Stills that already have their Live Photo video / their RAW.
    private var hasVideo: [Bool]
    private var hasRaw: [Bool]

    package static func assets(of files: [GroupingFile]) -> [GroupedAsset] {
        members(of: files).map { members in
            GroupedAsset(members: members.map { GroupedAsset.Member(path: files[$0.index].path, role: $0.role) })
        }
    }

    /// The assets as positions in `files` with their roles, each asset's members
    /// in path order, the assets in the order of their first member's path.
    /// For a caller that holds more per file than the path (the scanner, its
    /// manifests): it takes its own records by position, with no lookup by path.
    package static func members(of files: [GroupingFile]) -> [[(index: Int, role: FileRole)]] {
        var grouping = DirectoryGrouping(files: files)
        grouping.pairLivePhotosByIdentifier()
        grouping.pairLivePhotosByBasename()
        grouping.pairRaws()
        grouping.attachSidecars()
        return grouping.members()
    }

    private init(files: [GroupingFile]) {
        inputIndex = files.indices.sorted { files[$0].path < files[$1].path }
        self.files = inputIndex.map { files[$0] }
        owner = Array(repeating: nil, count: files.count)
        role = Array(repeating: .primary, count: files.count)
        hasVideo = Array(repeating: false, count: files.count)
        hasRaw = Array(repeating: false, count: files.count)
    }

    private mutating func attach(_ member: Int, to head: Int, as memberRole: FileRole) {
        owner[member] = head
        role[member] = memberRole
    }

    private mutating func pairLivePhotosByIdentifier() {
        var stills: [NameKey: [Int]] = [:]
        var videos: [NameKey: [Int]] = [:]
        for index in files.indices {
            guard let identifier = files[index].contentIdentifier.map(NameKey.init) else { continue }
            switch files[index].mediaType {
            case .stillImage: stills[identifier, default: []].append(index)
            case .video: videos[identifier, default: []].append(index)
            case .raw, .sidecar, .other: break
            }
        }
        // Identifiers are disjoint, so the dictionary's order cannot matter.
        for (identifier, stillIndices) in stills {
            guard let videoIndices = videos[identifier] else { continue }
            for (still, video) in zip(stillIndices, videoIndices) {
                attach(video, to: still, as: .livePhotoVideo)
                hasVideo[still] = true
            }
        }
    }

    private mutating func pairLivePhotosByBasename() {
        var videosByStem: [NameKey: [Int]] = [:]
        for index in files.indices
        where files[index].mediaType == .video && owner[index] == nil
            && AssetGrouper.livePhotoVideoExtensions.contains(files[index].fileExtension) {
            videosByStem[files[index].stemKey, default: []].append(index)
        }
        for still in files.indices
        where files[still].mediaType == .stillImage && !hasVideo[still]
            && AssetGrouper.livePhotoStillExtensions.contains(files[still].fileExtension) {
            guard let candidates = videosByStem[files[still].stemKey] else { continue }
            for video in candidates where owner[video] == nil && identifiersAllowPairing(still, video) {
                attach(video, to: still, as: .livePhotoVideo)
                hasVideo[still] = true
                break
            }
        }
    }

    /// Names may pair only where metadata does not contradict them.
    private func identifiersAllowPairing(_ first: Int, _ second: Int) -> Bool {
        guard let one = files[first].contentIdentifier, let other = files[second].contentIdentifier else { return true }
        return NameKey(one) == NameKey(other)
    }

    private mutating func pairRaws() {
        var stillsByStem: [NameKey: [Int]] = [:]
        for index in files.indices
        where files[index].mediaType == .stillImage && AssetGrouper.rawCompanionExtensions.contains(files[index].fileExtension) {
            stillsByStem[files[index].stemKey, default: []].append(index)
        }
        for raw in files.indices where files[raw].mediaType == .raw {
            guard let still = stillsByStem[files[raw].stemKey]?.first(where: { !hasRaw[$0] }) else { continue }
            attach(raw, to: still, as: .raw)
            hasRaw[still] = true
        }
    }

    private mutating func attachSidecars() {
        var headByExactName: [NameKey: Int] = [:]
        var headByLowercasedName: [NameKey: Int] = [:]
        var headsByStem: [NameKey: [Int]] = [:]
        var rawOwnersByStem: [NameKey: [Int]] = [:]
        for index in files.indices where files[index].mediaType != .sidecar {
            let head = owner[index] ?? index
            headByExactName[NameKey(files[index].name)] = head
            let lowercased = NameKey(files[index].name.lowercased())
            if headByLowercasedName[lowercased] == nil {
                headByLowercasedName[lowercased] = head
            }
            if owner[index] == nil {
                headsByStem[files[index].stemKey, default: []].append(index)
            } else if role[index] == .raw {
                rawOwnersByStem[files[index].stemKey, default: []].append(head)
            }
        }
        // When several assets share a stem, a photo is the likelier owner of
        // edit instructions than a RAW, a video or anything else.
        for stem in headsByStem.keys {
            headsByStem[stem]?.sort { (Self.ownerRank(files[$0].mediaType), files[$0].path) < (Self.ownerRank(files[$1].mediaType), files[$1].path) }
        }

        for sidecar in files.indices where files[sidecar].mediaType == .sidecar {
            let base = GroupingFile.stem(of: files[sidecar].name)
            var head: Int?
            if !MediaType.lowercasedExtension(of: base).isEmpty {
                head = headByExactName[NameKey(base)] ?? headByLowercasedName[NameKey(base.lowercased())]
            }
            if head == nil {
                head = headsByStem[files[sidecar].stemKey]?.first ?? rawOwnersByStem[files[sidecar].stemKey]?.first
            }
            if let head {
                attach(sidecar, to: head, as: .sidecar)
            }
        }
    }

    private static func ownerRank(_ type: MediaType) -> Int {
        switch type {
        case .stillImage: 0
        case .raw: 1
        case .video: 2
        case .other, .sidecar: 3
        }
    }

    private func members() -> [[(index: Int, role: FileRole)]] {
        var membersByHead = [[(index: Int, role: FileRole)]](repeating: [], count: files.count)
        for index in files.indices {
            membersByHead[owner[index] ?? index].append((inputIndex[index], role[index]))
        }
        return membersByHead.filter { !$0.isEmpty }
    }
}
