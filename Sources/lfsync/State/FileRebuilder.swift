import Foundation
import LocalFirstSync
import LFSyncCrypto
import LFSyncContent
import LFSyncLanding

/// Builds verified copies of files from the chunk lists recorded for them, in the library's
/// staging area: each chunk from this device's own bytes where they still hash to the
/// recorded chunk hash, the others asked of a trusted device (ChunkRequest), each checked
/// against its recorded hash before it is written (`IncomingFile`). The chunk list is the
/// file hash, so a copy is the recorded file once every chunk is in. What `verify --repair`
/// and a pull that brings offloaded files back share.
///
/// The requests of many files are in flight together (`window`): a library of small files
/// is one chunk per file, and one round trip per file at a time would make its restore as
/// slow as the link's latency times the number of files.
struct FileRebuilder {
    let staging: StagingArea
    let sync: LocalSync
    let peer: Peer
    /// Chunk requests in flight at once: the answering side queues at most four.
    static let window = 4
    /// Files being built at once: their partials are open in the staging area.
    static let openFiles = 64

    struct Rebuilt {
        var staged: StagedFile
        var chunksFetched: Int
        var bytesFetched: UInt64
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Rebuilds one file (see `rebuild(_:local:done:)`).
    func rebuild(_ manifest: FileManifest, local: (Int, ChunkRef) -> [UInt8]?) async throws -> Rebuilt {
        var outcome: Result<Rebuilt, any Error> = .failure(Failure(description: "was not rebuilt"))
        try await rebuild([manifest], local: { _, index, chunk in local(index, chunk) }) { _, result in outcome = result }
        return try outcome.get()
    }

    /// Rebuilds each of `manifests`, calling `done` with its position and outcome as each
    /// one ends (in any order).
    /// - Parameter local: chunk `index` of the file at a position, from this device, or nil
    ///   to ask the peer; what it returns is checked against the chunk's hash (and asked for
    ///   when it fails).
    /// - Throws: only what ends every file at once: the connection, a cancellation.
    func rebuild(_ manifests: [FileManifest], local: (Int, Int, ChunkRef) -> [UInt8]?,
                 done: (Int, Result<Rebuilt, any Error>) async -> Void) async throws {
        /// A file being built: its partial and the chunks still owed.
        struct Open {
            var file: IncomingFile
            var owed: Int
            var fetched: UInt64 = 0
            var chunks = 0
        }
        var open: [Int: Open] = [:]
        var requests: [(file: Int, chunk: Int)] = []
        var nextFile = 0, nextRequest = 0

        func finish(_ position: Int, _ result: Result<Rebuilt, any Error>) async {
            if case .failure = result { open[position]?.file.discardIfCreated() }
            open[position] = nil
            await done(position, result)
        }
        /// Opens files until `openFiles` are being built (or none is left); each file's local
        /// chunks are written at once, the others queued as requests.
        func openMore() async {
            while open.count < Self.openFiles, nextFile < manifests.count {
                let position = nextFile, manifest = manifests[position]
                nextFile += 1
                do {
                    let file = try IncomingFile.prepare(in: staging, manifest: manifest)
                    var owed = 0
                    for (index, chunk) in manifest.chunks.enumerated() {
                        if let bytes = local(position, index, chunk), bytes.count == Int(chunk.length), ContentHash.chunk(bytes) == chunk.hash {
                            try file.write(chunkAt: index, bytes: bytes)
                        } else {
                            requests.append((position, index))
                            owed += 1
                        }
                    }
                    open[position] = Open(file: file, owed: owed)
                    if owed == 0 { await complete(position) }
                } catch {
                    await finish(position, .failure(error))
                }
            }
        }
        func complete(_ position: Int) async {
            guard let built = open[position] else { return }
            do {
                let staged = try built.file.verify()
                open[position] = nil
                await done(position, .success(Rebuilt(staged: staged, chunksFetched: built.chunks, bytesFetched: built.fetched)))
            } catch {
                await finish(position, .failure(error))
            }
        }

        // Whatever ends them all (the connection, a cancellation) leaves no partial behind.
        defer { for built in open.values { built.file.discardIfCreated() } }
        await openMore()
        try await withThrowingTaskGroup(of: (file: Int, chunk: Int, bytes: [UInt8]?).self) { group in
            var inFlight = 0
            func ask() {
                while inFlight < Self.window, nextRequest < requests.count {
                    let (position, index) = requests[nextRequest]
                    nextRequest += 1
                    // A file that already failed needs none of its other chunks.
                    guard open[position] != nil else { continue }
                    let chunk = manifests[position].chunks[index]
                    inFlight += 1
                    group.addTask { [sync, peer] in
                        (position, index, try await sync.fetchChunk(hash: chunk.hash, length: chunk.length, from: peer))
                    }
                }
            }
            ask()
            while let (position, index, bytes) = try await group.next() {
                inFlight -= 1
                if var built = open[position] {
                    if let bytes {
                        do {
                            // fetchChunk checked length and hash; write checks them again before a byte lands.
                            try built.file.write(chunkAt: index, bytes: bytes)
                            built.owed -= 1
                            built.chunks += 1
                            built.fetched += UInt64(bytes.count)
                            open[position] = built
                            if built.owed == 0 { await complete(position) }
                        } catch {
                            await finish(position, .failure(error))
                        }
                    } else {
                        await finish(position, .failure(Failure(description: "does not hold chunk \(index) of it")))
                    }
                }
                await openMore()
                // Drop the requests already made, so the queue does not grow with the library.
                if nextRequest > 4096 {
                    requests.removeFirst(nextRequest)
                    nextRequest = 0
                }
                ask()
            }
        }
    }
}
