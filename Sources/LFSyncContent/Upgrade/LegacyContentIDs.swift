import Foundation
import LFSyncCrypto
import LFSyncSystem
import Synchronization

/// How lfsync named content before its hashes were keyed (protocol 3 before the change of
/// PROTOCOL.md's "Hashes"): a file hash was unkeyed BLAKE2b-256 of the file's bytes, and a
/// content ID unkeyed BLAKE2b-256 of the same canonical encoding as today's. Kept only to
/// find a ledger's rows again under their new names (`LibraryHashUpgrade`), computed from the
/// bytes on disk now — never from an old cache row — so a row is carried over only to the
/// content it was about.
package enum LegacyContentIDs {
    /// What the old hashes call the contents and files of a scan.
    package struct Names: Sendable {
        /// Today's content ID → the old one.
        package var contents: [ContentID: ContentID] = [:]
        /// Today's file hash → the old one.
        package var files: [Hash256: Hash256] = [:]
    }

    /// For each content of `assets` (by today's content ID), the ID the old hashes give the
    /// same bytes, and for each file its old hash. Every distinct file is read once more, on
    /// every core; a file that cannot be read, or shows another size or mtime than `assets`
    /// says (it changed since the scan), has no old name, nor has an asset holding it.
    package static func of(
        _ assets: [Asset], root: URL, workerCount: Int = ProcessInfo.processInfo.activeProcessorCount,
        progress: @escaping @Sendable (_ done: Int, _ total: Int) -> Void = { _, _ in }
    ) async -> Names {
        var fileIndex: [Hash256: Int] = [:]
        var distinct: [FileManifest] = []
        var contents: [ContentID: Asset] = [:]
        for asset in assets where contents[asset.contentID] == nil {
            contents[asset.contentID] = asset
            for file in asset.files where fileIndex[file.manifest.fileHash] == nil {
                fileIndex[file.manifest.fileHash] = distinct.count
                distinct.append(file.manifest)
            }
        }
        let files = distinct
        let hashes = Results(count: files.count)
        let rootPath = root.path
        let total = files.count
        await ParallelWork.forEach(
            count: files.count, workerCount: workerCount,
            makeScratch: { UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 64) },
            releaseScratch: { $0.deallocate() }
        ) { index, buffer in
            hashes.set(index, legacyFileHash(of: files[index], at: rootPath + "/" + files[index].path.string, buffer: buffer))
            progress(hashes.finished.add(1, ordering: .relaxed).newValue, total)
        }
        let legacy = hashes.values()
        var names = Names()
        for (hash, index) in fileIndex {
            if let old = legacy[index] { names.files[hash] = old }
        }
        for (contentID, asset) in contents {
            var pairs: [(role: FileRole, fileHash: Hash256)] = []
            for file in asset.files {
                guard let index = fileIndex[file.manifest.fileHash], let hash = legacy[index] else { break }
                pairs.append((file.role, hash))
            }
            guard pairs.count == asset.files.count else { continue }
            names.contents[contentID] = ContentID(hash: Blake2b.hash(ContentID.canonicalEncoding(of: pairs)))
        }
        return names
    }

    /// Unkeyed BLAKE2b-256 of the file's bytes, if it still has the size and mtime the
    /// manifest was made under, before and after the read.
    static func legacyFileHash(of manifest: FileManifest, at path: String, buffer: UnsafeMutableRawBufferPointer) -> Hash256? {
        guard let file = try? ReadOnlyFile(path: path, nonBlocking: true, size: manifest.size),
              let before = try? file.status(), before.kind == .regular,
              before.size == manifest.size, before.modificationTimeNs == manifest.modificationTimeNs
        else { return nil }
        var hasher = Blake2b()
        var total: UInt64 = 0
        while let count = try? file.read(into: buffer), count > 0 {
            hasher.update(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            total += UInt64(count)
        }
        guard total == manifest.size, let after = try? file.status(), after.hasSameStamp(as: before) else { return nil }
        return hasher.finalizeHash()
    }

    /// One slot per file, each written by one worker.
    private final class Results: Sendable {
        private let slots: LockedState<[Hash256?]>
        let finished = Atomic<Int>(0)

        init(count: Int) { slots = LockedState([Hash256?](repeating: nil, count: count)) }
        func set(_ index: Int, _ value: Hash256?) { slots.withLock { $0[index] = value } }
        func values() -> [Hash256?] { slots.withLock { $0 } }
    }
}
