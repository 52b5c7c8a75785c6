import Foundation
import LocalFirstSync
import LFSyncCrypto
import LFSyncContent
import LFSyncLanding

/// Builds a verified copy of one file from the chunk list recorded for it, in the
/// library's staging area: each chunk from this device's own bytes where they still hash
/// to the recorded chunk hash, the others asked of a trusted device (ChunkRequest), each
/// checked against its recorded hash before it is written (`IncomingFile`). The chunk list
/// is the file hash, so the copy is the recorded file when every chunk is in. What
/// `verify --repair` and a pull that brings offloaded files back share.
struct FileRebuilder {
    let staging: StagingArea
    let sync: LocalSync
    let peer: Peer
    /// Chunk requests in flight at once: the answering side queues at most four.
    static let window = 3

    struct Rebuilt {
        var staged: StagedFile
        var chunksFetched: Int
        var bytesFetched: UInt64
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// - Parameter local: chunk `index`'s bytes from this device, or nil to ask the peer;
    ///   whatever it returns is checked against the chunk's hash (and asked for when it fails).
    func rebuild(_ manifest: FileManifest, local: (Int, ChunkRef) -> [UInt8]?) async throws -> Rebuilt {
        let file = try IncomingFile.prepare(in: staging, manifest: manifest)
        var wanted: [Int] = []
        for (index, chunk) in manifest.chunks.enumerated() {
            if let bytes = local(index, chunk), bytes.count == Int(chunk.length), ContentHash.chunk(bytes) == chunk.hash {
                try file.write(chunkAt: index, bytes: bytes)
            } else {
                wanted.append(index)
            }
        }
        var fetched: UInt64 = 0
        do {
            try await withThrowingTaskGroup(of: (Int, [UInt8]?).self) { group in
                var next = 0
                func ask() {
                    guard next < wanted.count else { return }
                    let index = wanted[next], chunk = manifest.chunks[index]
                    next += 1
                    group.addTask { [sync, peer] in (index, try await sync.fetchChunk(hash: chunk.hash, length: chunk.length, from: peer)) }
                }
                for _ in 0..<Self.window { ask() }
                while let (index, bytes) = try await group.next() {
                    guard let bytes else { throw Failure(description: "does not hold chunk \(index) of it") }
                    // fetchChunk checked length and hash; write checks them again before a byte lands.
                    try file.write(chunkAt: index, bytes: bytes)
                    fetched += UInt64(bytes.count)
                    ask()
                }
            }
            return Rebuilt(staged: try file.verify(), chunksFetched: wanted.count, bytesFetched: fetched)
        } catch {
            file.discardIfCreated()
            throw error
        }
    }
}
