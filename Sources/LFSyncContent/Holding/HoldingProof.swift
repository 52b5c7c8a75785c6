import Foundation
import LFSyncCrypto
import LFSyncSystem

/// The answer to a holding challenge (PROTOCOL.md, "Holding checks"): a keyed BLAKE2b-256
/// of an asset's bytes under the asker's fresh nonce. Only a device that reads those bytes
/// now can make it; the asker, who has them too, makes the same and compares.
///
/// Every chunk is checked against its recorded hash on the way: a file damaged on disk
/// (same size and time, other bytes) gives no proof, so a device never vouches for a copy
/// it could not serve.
package enum HoldingProof {
    /// Hashed first, so a proof can never be mistaken for any other keyed hash of the bytes.
    package static let context = Array("lfsync/3 holding proof".utf8)

    package enum Outcome: Hashable, Sendable {
        case proof(Hash256)
        /// A chunk of this file no longer has its recorded hash (or the file's size changed).
        case damaged(RelativePath)
        /// A file could not be read at all.
        case unreadable(RelativePath, String)
    }

    /// Reads every file of `asset` below `library`, in the asset's canonical file order,
    /// chunk by chunk as its manifest cuts it: `context`, the content ID, the holder's
    /// Device ID, then per file its size (8 bytes, big-endian) and its bytes.
    ///
    /// The holder's Device ID (the one its handshake proved) is in the proof so that a
    /// device cannot pass on a challenge to another that holds the bytes and present that
    /// device's answer as its own: the asker checks each proof under the ID of the
    /// connection it came over.
    package static func compute(for asset: Asset, in library: URL, nonce: Hash256, holder: DeviceID) -> Outcome {
        var proof = KeyedBlake2b(key: nonce.bytes)
        var header = ByteWriter(capacity: context.count + 2 * Hash256.byteCount)
        header.write(contentsOf: context[...])
        header.write(asset.contentID.hash)
        header.write(holder.hash)
        proof.update(header.bytes)
        for file in asset.files {
            let manifest = file.manifest
            let path = library.appendingPathComponent(manifest.path.string).path
            let handle: ReadOnlyFile
            do { handle = try ReadOnlyFile(path: path, nonBlocking: true, size: manifest.size) } catch {
                return .unreadable(manifest.path, error.description)
            }
            var size = ByteWriter(capacity: 8)
            size.write(manifest.size)
            proof.update(size.bytes)
            var offset: UInt64 = 0
            do {
                for chunk in manifest.chunks {
                    let bytes = try handle.read(atOffset: offset, count: Int(chunk.length))
                    guard bytes.count == Int(chunk.length), ContentHash.chunk(bytes) == chunk.hash else { return .damaged(manifest.path) }
                    proof.update(bytes)
                    offset += UInt64(chunk.length)
                }
                // Bytes beyond the manifest: the file grew.
                guard try handle.read(atOffset: offset, count: 1).isEmpty else { return .damaged(manifest.path) }
            } catch {
                return .unreadable(manifest.path, error.description)
            }
        }
        return .proof(proof.finalizeAndReset())
    }
}
