/// The result of scanning a library: its assets, what was left out, and how
/// much work the cache saved.
public struct LibraryScan: Sendable {
    public struct Statistics: Sendable, Hashable, Codable {
        public var files: Int = 0
        public var bytes: UInt64 = 0
        public var filesFromCache: Int = 0
        public var filesHashed: Int = 0
        public var bytesHashed: UInt64 = 0
        public var seconds: Double = 0
    }

    /// Sorted by primary path (bytes).
    public var assets: [Asset]
    public var skipped: [SkippedEntry]
    /// What the ignore rules left out, sorted: files, and directories (as `dir/`)
    /// that were not entered. Never mixed up with `skipped`, which could not be read or sent.
    public var excluded: [RelativePath]
    public var statistics: Statistics
    /// Per path, the status under which the file's manifest is known to
    /// describe its bytes (see `SettledFiles`). Files that changed too shortly
    /// before they were hashed are absent.
    public var settledStatus: SettledFiles

    public init(
        assets: [Asset], skipped: [SkippedEntry], excluded: [RelativePath] = [], statistics: Statistics,
        settledStatus: SettledFiles = SettledFiles()
    ) {
        self.assets = assets
        self.skipped = skipped
        self.excluded = excluded
        self.statistics = statistics
        self.settledStatus = settledStatus
    }
}
