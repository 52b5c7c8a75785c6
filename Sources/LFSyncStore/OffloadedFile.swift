import Foundation
import LFSyncContent
import LFSyncCrypto

/// A file `lfsync offload` removed from a library, and the devices that held its asset
/// verified when it did (the `offloaded` table).
package struct OffloadedFile: Hashable, Sendable {
    /// The library's root, as the command that offloaded it resolved it.
    package var library: String
    package var path: RelativePath
    package var content: ContentID
    package var size: UInt64
    /// The Device IDs (text form) that answered "held and verified".
    package var holders: [String]
    package var at: Date

    package init(library: String, path: RelativePath, content: ContentID, size: UInt64, holders: [String], at: Date) {
        self.library = library
        self.path = path
        self.content = content
        self.size = size
        self.holders = holders
        self.at = at
    }
}
