import Foundation
import LocalFirstSync
import LFSyncSystem
import LFSyncCrypto
import LFSyncContent
import LFSyncLanding
import LFSyncTCP

/// `lfsync verify --repair`: heals files whose bytes no longer match the hashes recorded
/// when they were scanned while their size and modification time say nobody edited them
/// (bit rot). Only the chunks whose hashes fail are fetched, from a trusted device that
/// answers the holding check "held and verified" for the asset (or the one named); each
/// fetched chunk is checked against its recorded hash, the whole repaired copy again
/// before it replaces the damaged one, in one rename. The damaged bytes stay in
/// `.lfsync/damaged/` until the user clears them (`verify --clear-damaged`).
///
/// An edited file never reaches here (its size or time changed: `verify` reports it
/// modified), and one edited while being repaired is left alone: the rename happens only
/// if the file still has the size and time that were recorded.
struct BitRotRepair {
    /// A damaged file: its path, the manifest recorded before the damage, and its asset
    /// as it was (what the holding check names).
    struct Damage {
        var path: RelativePath
        var recorded: FileManifest
        var asset: Asset
    }

    struct Repaired: Encodable {
        var path: RelativePath
        var chunks: Int
        var bytes: UInt64
        var from: String
        /// Where the damaged bytes were kept, library-relative.
        var damagedCopy: String
    }

    struct Unrepaired: Encodable {
        var path: RelativePath
        var reason: String
    }

    /// `.lfsync/damaged` in the library: damaged copies, one folder per repair run.
    static func damagedFolder(in library: URL) -> URL {
        library.appendingPathComponent(".lfsync/damaged", isDirectory: true)
    }

    let library: URL
    let sync: LocalSync
    let peers: [Peer]
    /// A device by the name this device gave it.
    let label: (Peer) -> String

    func repair(_ damage: [Damage]) async -> (repaired: [Repaired], unrepaired: [Unrepaired]) {
        var repaired: [Repaired] = [], unrepaired: [Unrepaired] = []
        let stamp = Self.stamp()
        for item in damage {
            do {
                repaired.append(try await repair(item, stamp: stamp))
            } catch let failure as RepairFailure {
                unrepaired.append(Unrepaired(path: item.path, reason: failure.reason))
            } catch {
                unrepaired.append(Unrepaired(path: item.path, reason: "\(error)"))
            }
        }
        return (repaired, unrepaired)
    }

    struct RepairFailure: Error { var reason: String }

    private func repair(_ item: Damage, stamp: String) async throws -> Repaired {
        let directory = try LibraryDirectory(path: library.path)
        let path = try LibraryPath.validate(item.path)
        let bad = try badChunks(of: item, at: path, in: directory)
        guard !bad.isEmpty else { throw RepairFailure(reason: "every chunk matches its recorded hash now") }
        var lastProblem = peers.isEmpty ? "no trusted device could be reached" : "no device holds it verified"
        for peer in peers {
            // The live check: only a device that says it holds the asset verified now is asked for chunks.
            do {
                let answers = try await sync.checkHolding(of: [item.asset], on: peer, proof: false, timeout: .seconds(120))
                guard case .heldVerified = answers[item.asset.contentID] else {
                    lastProblem = "\(label(peer)): \(answers[item.asset.contentID].map { "\($0)" } ?? "no answer")"
                    continue
                }
                let (kept, fetched) = try await rebuild(item, at: path, in: directory, bad: Set(bad), from: peer, stamp: stamp)
                return Repaired(path: item.path, chunks: bad.count, bytes: fetched, from: label(peer), damagedCopy: kept)
            } catch let failure as RepairFailure {
                lastProblem = "\(label(peer)): \(failure.reason)"
            } catch {
                lastProblem = "\(label(peer)): \(error)"
            }
        }
        throw RepairFailure(reason: lastProblem)
    }

    /// The indices of the recorded chunks whose bytes no longer hash to their recorded hash.
    private func badChunks(of item: Damage, at path: LibraryPath, in directory: LibraryDirectory) throws -> [Int] {
        let file = try directory.openFileForReading(path)
        let status = try file.status(path.description)
        guard status.size == item.recorded.size, status.modificationTimeNs == item.recorded.modificationTimeNs else {
            throw RepairFailure(reason: "changed since it was verified (edited?): not repaired")
        }
        var bad: [Int] = [], offset: UInt64 = 0
        for (index, chunk) in item.recorded.chunks.enumerated() {
            let bytes = try file.read(count: Int(chunk.length), at: offset, path.description)
            if bytes.count != Int(chunk.length) || ContentHash.chunk(bytes) != chunk.hash { bad.append(index) }
            offset += UInt64(chunk.length)
        }
        return bad
    }

    /// Writes the repaired copy in `.lfsync/repair`, chunk by chunk — the damaged file's good
    /// chunks, `peer`'s for the `bad` ones — each checked against its recorded hash (the file
    /// hash follows from the chunk list), so memory holds one chunk at a time however large the
    /// file. Then keeps the damaged file as a hard link in `.lfsync/damaged/<stamp>/` and
    /// renames the repair over it, only if it still has its recorded size and time. The
    /// library's folders are opened without following symlinks, as the receiver opens them.
    /// - Returns: the damaged copy's library-relative path, and the bytes fetched.
    private func rebuild(_ item: Damage, at path: LibraryPath, in directory: LibraryDirectory, bad: Set<Int>, from peer: Peer,
                         stamp: String) async throws -> (kept: String, fetched: UInt64) {
        let work = library.appendingPathComponent(".lfsync/repair", isDirectory: true)
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let temporary = work.appendingPathComponent(UUID().uuidString)
        defer { unlink(temporary.path) }
        let fd = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode_t(item.recorded.permissions & 0o777))
        guard fd >= 0 else { throw RepairFailure(reason: "cannot write the repaired copy in \(work.path): \(String(cString: strerror(errno)))") }
        let copy = OwnedDescriptor(taking: fd)
        let source = try directory.openFileForReading(path)
        var offset: UInt64 = 0, fetched: UInt64 = 0
        for (index, chunk) in item.recorded.chunks.enumerated() {
            let bytes: [UInt8]
            if bad.contains(index) {
                guard let theirs = try await sync.fetchChunk(hash: chunk.hash, length: chunk.length, from: peer) else {
                    throw RepairFailure(reason: "no longer holds a chunk of it")
                }
                bytes = theirs
                fetched += UInt64(bytes.count)
            } else {
                bytes = try source.read(count: Int(chunk.length), at: offset, path.description)
            }
            guard bytes.count == Int(chunk.length), ContentHash.chunk(bytes) == chunk.hash else {
                throw RepairFailure(reason: "the repaired copy does not match its recorded hashes (chunk \(index))")
            }
            try copy.write(bytes[...], at: offset, temporary.path)
            offset += UInt64(chunk.length)
        }
        // UTIME_OMIT from <sys/stat.h>, which Swift does not import: the access time is left alone.
        var times = [timespec(tv_sec: 0, tv_nsec: (1 << 30) - 2), FileTime.timespec(item.recorded.modificationTimeNs)]
        guard futimens(copy.rawValue, &times) == 0, fsync(copy.rawValue) == 0 else {
            throw RepairFailure(reason: "cannot finish the repaired copy: \(String(cString: strerror(errno)))")
        }
        // Still the file that was found damaged? Then keep it aside and put the repair in its place.
        let parent = try directory.openDirectory(path.parentComponents, create: false).directory
        let now = try parent.statusOfEntry(named: path.name, path.description)
        guard let now, now.kind == .regular, now.size == item.recorded.size, now.modificationTimeNs == item.recorded.modificationTimeNs else {
            throw RepairFailure(reason: "changed while being repaired: left alone")
        }
        let kept = ".lfsync/damaged/\(stamp)/\(item.path.string)"
        let keptURL = library.appendingPathComponent(kept)
        try FileManager.default.createDirectory(at: keptURL.deletingLastPathComponent(), withIntermediateDirectories: true)
        guard path.name.withCString({ linkat(parent.rawValue, $0, AT_FDCWD, keptURL.path, 0) }) == 0 || errno == EEXIST else {
            throw RepairFailure(reason: "cannot keep the damaged copy at \(kept): \(String(cString: strerror(errno)))")
        }
        guard path.name.withCString({ renameat(AT_FDCWD, temporary.path, parent.rawValue, $0) }) == 0 else {
            throw RepairFailure(reason: "cannot put the repaired copy in place: \(String(cString: strerror(errno)))")
        }
        fsync(parent.rawValue)
        return (kept, fetched)
    }

    /// A folder name that sorts by time: `2026-12-05T10-20-34Z`.
    private static func stamp() -> String {
        let formatter = ISO8601DateFormatter()
        return formatter.string(from: Date()).replacingOccurrences(of: ":", with: "-")
    }

    /// The damaged copies kept so far, library-relative.
    static func keptCopies(in library: URL) -> [String] {
        let root = damagedFolder(in: library)
        guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey]) else { return [] }
        var found: [String] = []
        for case let url as URL in walker where (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true {
            found.append(".lfsync/damaged/" + url.path.dropFirst(root.path.count + 1))
        }
        return found.sorted()
    }
}
