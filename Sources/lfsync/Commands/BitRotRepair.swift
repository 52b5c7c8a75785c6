import Foundation
import LocalFirstSync
import LFSyncSystem
import LFSyncCrypto
import LFSyncContent
import LFSyncLanding
import LFSyncTCP

/// `lfsync verify --repair`: heals files whose bytes no longer match the hashes recorded
/// when they were scanned while nothing the file system records moved — inode, size,
/// modification time and change time all as recorded: bit rot, which the file system was
/// never told of. Only the chunks whose hashes fail are fetched, from a trusted device that
/// answers the holding check "held and verified" for the asset (or the one named); each
/// fetched chunk is checked against its recorded hash, and the repaired copy, built in the
/// staging area, replaces the damaged file in one exchange. The damaged bytes stay in
/// `.lfsync/damaged/` until the user clears them (`verify --clear-damaged`).
///
/// An edited file never reaches here: an edit moves the change time even when the
/// modification time is put back, and `verify` reports it modified. One edited while being
/// repaired is left alone: the exchange happens only if the file still is the one checked
/// (`CheckedFile`), and whatever stood at the name at that instant is what is kept.
struct BitRotRepair {
    /// A damaged file: the manifest recorded before the damage, the file as it was checked
    /// (the identity the recorded hashes were made under), and its asset as it was (what
    /// the holding check names).
    struct Damage {
        var path: RelativePath
        var recorded: FileManifest
        var checked: CheckedFile
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
        library.appendingPathComponent(".lfsync/\(KeptCopies.damagedArea)", isDirectory: true)
    }

    let library: URL
    let sync: LocalSync
    let peers: [Peer]
    /// A device by the name this device gave it.
    let label: (Peer) -> String

    func repair(_ damage: [Damage]) async -> (repaired: [Repaired], unrepaired: [Unrepaired]) {
        var repaired: [Repaired] = [], unrepaired: [Unrepaired] = []
        let stamp = Self.stamp()
        let directory: LibraryDirectory, staging: StagingArea
        do {
            directory = try LibraryDirectory(path: library.path)
            staging = try StagingArea(library: directory)
        } catch {
            return ([], damage.map { Unrepaired(path: $0.path, reason: "\(error)") })
        }
        for item in damage {
            do {
                repaired.append(try await repair(item, in: directory, staging: staging, stamp: stamp))
            } catch let failure as RepairFailure {
                unrepaired.append(Unrepaired(path: item.path, reason: failure.reason))
            } catch {
                unrepaired.append(Unrepaired(path: item.path, reason: "\(error)"))
            }
        }
        return (repaired, unrepaired)
    }

    struct RepairFailure: Error { var reason: String }

    private func repair(_ item: Damage, in directory: LibraryDirectory, staging: StagingArea, stamp: String) async throws -> Repaired {
        let bad = try badChunks(of: item, in: directory)
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
                return try await rebuild(item, in: directory, staging: staging, bad: Set(bad), from: peer, stamp: stamp)
            } catch let failure as RepairFailure {
                lastProblem = "\(label(peer)): \(failure.reason)"
            } catch {
                lastProblem = "\(label(peer)): \(error)"
            }
        }
        throw RepairFailure(reason: lastProblem)
    }

    /// The indices of the recorded chunks whose bytes no longer hash to their recorded hash,
    /// read from the file as checked (still unchanged since).
    private func badChunks(of item: Damage, in directory: LibraryDirectory) throws -> [Int] {
        let file = try Self.open(item, in: directory)
        var bad: [Int] = [], offset: UInt64 = 0
        for (index, chunk) in item.recorded.chunks.enumerated() {
            let bytes = try file.file.read(count: Int(chunk.length), at: offset, item.path.string)
            if bytes.count != Int(chunk.length) || ContentHash.chunk(bytes) != chunk.hash { bad.append(index) }
            offset += UInt64(chunk.length)
        }
        return bad
    }

    private static func open(_ item: Damage, in directory: LibraryDirectory) throws -> LibraryDirectory.CheckedOpen {
        switch try directory.openChecked(item.checked) {
        case let .unchanged(opened): return opened
        case let .changed(change): throw RepairFailure(reason: "changed since it was checked (\(change)): not repaired")
        }
    }

    /// Builds the repaired copy in the staging area — the damaged file's good chunks, `peer`'s
    /// for the `bad` ones, each checked against its recorded hash — then puts it in the
    /// damaged file's place, only if that is still the file checked, keeping the damaged one
    /// in `.lfsync/damaged/<stamp>/`. Every step goes through the library's descriptors.
    private func rebuild(_ item: Damage, in directory: LibraryDirectory, staging: StagingArea, bad: Set<Int>, from peer: Peer,
                         stamp: String) async throws -> Repaired {
        let source = try Self.open(item, in: directory)
        var offsets: [UInt64] = [], offset: UInt64 = 0
        for chunk in item.recorded.chunks {
            offsets.append(offset)
            offset += UInt64(chunk.length)
        }
        let rebuilt: FileRebuilder.Rebuilt
        do {
            rebuilt = try await FileRebuilder(staging: staging, sync: sync, peer: peer).rebuild(item.recorded) { index, chunk in
                bad.contains(index) ? nil : try? source.file.read(count: Int(chunk.length), at: offsets[index], item.path.string)
            }
        } catch let failure as FileRebuilder.Failure {
            throw RepairFailure(reason: failure.description)
        }
        let staged = rebuilt.staged
        do {
            try staged.prepareForInstall(modificationTimeNs: item.recorded.modificationTimeNs, mode: mode_t(source.status.permissions & 0o7777))
            let path = try LibraryPath.validate(item.path)
            let keep = try KeptCopies.place(for: path, area: KeptCopies.damagedArea, stamp: stamp, in: directory)
            if let change = try staged.replace(item.checked, keepingReplacedAt: keep) {
                throw RepairFailure(reason: "changed while being repaired (\(change)): left alone")
            }
        } catch {
            try? staged.discard()
            throw error
        }
        return Repaired(path: item.path, chunks: rebuilt.chunksFetched, bytes: rebuilt.bytesFetched, from: label(peer),
                        damagedCopy: KeptCopies.displayPath(of: item.path, area: KeptCopies.damagedArea, stamp: stamp))
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
