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
                var fetched: [(index: Int, bytes: [UInt8])] = []
                for index in bad {
                    let chunk = item.recorded.chunks[index]
                    guard let bytes = try await sync.fetchChunk(hash: chunk.hash, length: chunk.length, from: peer) else {
                        throw SyncError.declined(reason: "\(label(peer)) no longer holds a chunk of it")
                    }
                    fetched.append((index, bytes))
                }
                let kept = try install(fetched, for: item, at: path, in: directory, stamp: stamp)
                return Repaired(path: item.path, chunks: bad.count, bytes: fetched.reduce(0) { $0 + UInt64($1.bytes.count) },
                                from: label(peer), damagedCopy: kept)
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

    /// Writes the repaired copy beside the library's state, checks every chunk of it, keeps
    /// the damaged file as a hard link in `.lfsync/damaged/<stamp>/`, and renames the repair
    /// over it — only if the file still has its recorded size and time.
    /// - Returns: the damaged copy's library-relative path.
    private func install(_ fetched: [(index: Int, bytes: [UInt8])], for item: Damage, at path: LibraryPath,
                         in directory: LibraryDirectory, stamp: String) throws -> String {
        let original = library.appendingPathComponent(item.path.string)
        let work = library.appendingPathComponent(".lfsync/repair", isDirectory: true)
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let temporary = work.appendingPathComponent(UUID().uuidString)
        defer { try? FileManager.default.removeItem(at: temporary) }
        // The damaged file's good bytes, then the fetched chunks over the bad ones.
        let source = try directory.openFileForReading(path)
        var bytes = try source.read(count: Int(item.recorded.size), at: 0, path.description)
        guard bytes.count == Int(item.recorded.size) else { throw RepairFailure(reason: "shorter than recorded while being repaired") }
        let offsets = item.recorded.chunks.reduce(into: [UInt64(0)]) { $0.append($0[$0.count - 1] + UInt64($1.length)) }
        for (index, chunk) in fetched {
            let start = Int(offsets[index])
            bytes.replaceSubrange(start..<start + chunk.count, with: chunk)
        }
        // Every chunk of the result, checked: the file hash follows from the chunk list.
        for (index, chunk) in item.recorded.chunks.enumerated() {
            let start = Int(offsets[index])
            guard ContentHash.chunk(bytes[start..<start + Int(chunk.length)]) == chunk.hash else {
                throw RepairFailure(reason: "the repaired copy does not match its recorded hashes")
            }
        }
        guard FileManager.default.createFile(atPath: temporary.path, contents: Data(bytes), attributes: [.posixPermissions: Int(item.recorded.permissions & 0o7777)]) else {
            throw RepairFailure(reason: "cannot write the repaired copy in \(work.path)")
        }
        try Self.durable(temporary, modificationTimeNs: item.recorded.modificationTimeNs)
        // Still the file that was found damaged? Then keep it aside and put the repair in its place.
        let now = try directory.openFileForReading(path).status(path.description)
        guard now.size == item.recorded.size, now.modificationTimeNs == item.recorded.modificationTimeNs else {
            throw RepairFailure(reason: "changed while being repaired: left alone")
        }
        let kept = ".lfsync/damaged/\(stamp)/\(item.path.string)"
        let keptURL = library.appendingPathComponent(kept)
        try FileManager.default.createDirectory(at: keptURL.deletingLastPathComponent(), withIntermediateDirectories: true)
        guard link(original.path, keptURL.path) == 0 || errno == EEXIST else {
            throw RepairFailure(reason: "cannot keep the damaged copy at \(kept): \(String(cString: strerror(errno)))")
        }
        guard rename(temporary.path, original.path) == 0 else {
            throw RepairFailure(reason: "cannot put the repaired copy in place: \(String(cString: strerror(errno)))")
        }
        Self.syncDirectory(original.deletingLastPathComponent())
        return kept
    }

    /// Sets the recorded modification time and makes the bytes durable before the rename.
    private static func durable(_ url: URL, modificationTimeNs: Int64) throws {
        let fd = open(url.path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw RepairFailure(reason: "cannot reopen the repaired copy") }
        defer { close(fd) }
        // UTIME_OMIT from <sys/stat.h>, which Swift does not import: the access time is left alone.
        let utimeOmit = (1 << 30) - 2
        var times = [timespec(tv_sec: 0, tv_nsec: utimeOmit), FileTime.timespec(modificationTimeNs)]
        guard futimens(fd, &times) == 0, fsync(fd) == 0 else {
            throw RepairFailure(reason: "cannot finish the repaired copy: \(String(cString: strerror(errno)))")
        }
    }

    private static func syncDirectory(_ url: URL) {
        let fd = open(url.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
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
