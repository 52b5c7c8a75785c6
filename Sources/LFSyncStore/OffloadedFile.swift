import Foundation
import LFSyncContent
import LFSyncCrypto

/// A file `lfsync offload` removed from a library, and the devices that held its asset
/// verified when it did (the `offloaded` table).
package struct OffloadedFile: Hashable, Sendable {
    /// The library's key (`libraryKey(_:)`).
    package var library: String
    package var path: RelativePath
    package var content: ContentID
    package var size: UInt64
    /// The Device IDs (text form) that answered "held and verified".
    package var holders: [String]
    package var at: Date
    /// The file as it was offloaded (its file hash and chunk list): what it is rebuilt
    /// from, and what tells that it is back. Nil for a row an lfsync before this field wrote.
    package var manifest: FileManifest?

    /// The key a library's rows are filed under: its real path, symlinks resolved (as its
    /// index is keyed), so a library reached through a link is still the same library.
    package static func libraryKey(_ library: URL) -> String {
        library.resolvingSymlinksInPath().standardizedFileURL.path
    }

    package init(library: String, path: RelativePath, content: ContentID, size: UInt64, holders: [String], at: Date,
                 manifest: FileManifest? = nil) {
        self.library = library
        self.manifest = manifest
        self.path = path
        self.content = content
        self.size = size
        self.holders = holders
        self.at = at
    }
}
