/// What a scan remembers between runs, so that rescanning an unchanged library
/// reads no file content. The scanner depends only on this; the store's
/// `ScanCache` implements it on SQLite (Content sits below Store, so the
/// dependency points down).
public protocol ScanMemory: Sendable {
    /// Every remembered file, in path byte order: the scanner merges the rows
    /// with its own sorted walk. Called on a thread of its own while the walk
    /// runs on another.
    func forEachEntry(_ body: (IndexedFile) -> Void) throws
    /// Remembers freshly hashed files.
    func remember(_ files: [IndexedFile]) throws
    /// Forgets every file whose path is not in `sortedPaths` (sorted by bytes).
    func forgetFiles(notInSorted sortedPaths: [RelativePath]) throws
}

/// Told about every freshly hashed file and every file gone since the last
/// scan; the store's `ChunkIndex` implements it to find chunks on disk.
public protocol ScanObserver: Sendable {
    /// Files hashed in this scan (not those the memory already knew).
    func didHash(_ files: [IndexedFile]) throws
    /// The scan is complete and found exactly `sortedPaths`: anything else is gone.
    func didFinishScan(found sortedPaths: [RelativePath]) throws
}
