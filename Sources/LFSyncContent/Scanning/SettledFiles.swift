import LFSyncSystem

/// Per path, the status (size, mtime, inode, ctime) under which a file's
/// manifest is known to describe its bytes: a sender that still finds exactly
/// this with `fstat` after reading a chunk need not hash the chunk again.
///
/// One sorted array searched by halves rather than a dictionary: for a library
/// of 200,000 files a dictionary's buckets cost more than twice as much, and a
/// lookup per chunk read is cheap either way.
public struct SettledFiles: Sendable {
    public private(set) var paths: [RelativePath] = []
    private var statuses: [FileStatus] = []

    public init() {}

    /// From entries in any order.
    package init(_ entries: [RelativePath: FileStatus]) {
        for path in entries.keys.sorted() {
            if let status = entries[path] { append(path, status) }
        }
    }

    public var count: Int { paths.count }
    public var isEmpty: Bool { paths.isEmpty }

    /// Adds a file; paths must come in ascending byte order.
    package mutating func append(_ path: RelativePath, _ status: FileStatus) {
        precondition(paths.last.map { $0 < path } ?? true, "settled files must be added in path order")
        paths.append(path)
        statuses.append(status)
    }

    package subscript(path: RelativePath) -> FileStatus? {
        var low = 0, high = paths.count
        while low < high {
            let middle = (low + high) / 2
            if paths[middle] < path { low = middle + 1 } else { high = middle }
        }
        return low < paths.count && paths[low] == path ? statuses[low] : nil
    }
}
