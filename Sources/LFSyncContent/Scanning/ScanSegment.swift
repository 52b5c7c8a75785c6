/// A run of whole directories from a streaming scan, hashed and grouped:
/// what a push can offer while the rest of the library is still being read.
package struct ScanSegment: Sendable {
    /// Sorted by primary path (bytes) within the segment.
    public var assets: [Asset]
    /// The segment's files whose manifests are known to describe their bytes (see `SettledFiles`).
    public var settled: SettledFiles

    public init(assets: [Asset], settled: SettledFiles) {
        self.assets = assets
        self.settled = settled
    }
}
