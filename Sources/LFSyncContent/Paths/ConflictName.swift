import LFSyncCrypto

/// The name a received file gets when a *different* file already has its
/// name: `IMG_0001.HEIC` → `IMG_0001 (conflict 1a2b3c4d).HEIC`.
///
/// Derived from the incoming content only — the Content ID of the asset the file
/// belongs to, so the files of one asset (a Live Photo's still and video, a RAW and
/// its JPEG) get one suffix and stay recognisably together — so receiving the same
/// conflicting asset again finds its earlier copy instead of piling up copies, and two
/// devices name the same conflict alike. The extension is kept so the file still opens
/// in the right application.
package enum ConflictName {
    /// First the short form (8 hex digits of the tag); should that name hold yet other
    /// content, the full 64-digit tag, which only a deliberate plant can occupy.
    package static func candidates(for name: String, tag: Hash256) -> [String] {
        let hex = tag.hex
        return [make(name, tag: String(hex.prefix(8))), make(name, tag: hex)]
    }

    /// Inserts " (conflict <tag>)" before the extension, shortening the stem
    /// (whole characters) when the result would pass the 255-byte name limit.
    package static func make(_ name: String, tag: String) -> String {
        let suffix = " (conflict \(tag))"
        var stem = Substring(name)
        var fileExtension = Substring("")
        // An extension is text after the last dot, when that dot is neither
        // first (".hidden") nor last ("name.") and the extension is short.
        if let dot = name.lastIndex(of: "."), dot != name.startIndex, name.index(after: dot) != name.endIndex,
           name[dot...].utf8.count <= 32 {
            stem = name[..<dot]
            fileExtension = name[dot...]
        }
        let budget = LibraryPath.maxComponentBytes - suffix.utf8.count - fileExtension.utf8.count
        while stem.utf8.count > budget { stem = stem.dropLast() }
        return String(stem) + suffix + String(fileExtension)
    }
}
