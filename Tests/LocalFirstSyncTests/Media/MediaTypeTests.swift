import Testing
@testable import LocalFirstSync
@testable import LFSyncContent

/// `MediaType` decides how files group into assets on both sides, so its
/// extension rule must not drift when the fast path is taken.
struct MediaTypeTests {
    @Test func extensionIsWhatFollowsTheLastDotOfTheName() {
        let cases: [(String, String)] = [
            ("IMG_0001.JPG", "jpg"), ("a/b/IMG_0001.HeIc", "heic"), ("a.b/c", ""), ("a/b/", ""),
            ("dir/file.tar.GZ", "gz"), (".bashrc", ""), ("dir/.hidden", ""), ("x.", ""), ("a..b", "b"),
            ("noext", ""), ("dir.d/IMG.MOV/", "mov"), ("Fotos/Über.JPEG", "jpeg"), ("bild.ÄBC", "äbc"),
        ]
        for (path, expected) in cases {
            #expect(MediaType.lowercasedExtension(of: path) == expected, "\(path)")
        }
    }

    @Test func kindsFollowTheExtension() {
        #expect(MediaType(path: "2024/IMG_1.HEIC") == .stillImage)
        #expect(MediaType(path: "clip.Mov") == .video)
        #expect(MediaType(path: "r.DNG") == .raw)
        #expect(MediaType(path: "IMG_1.AAE") == .sidecar)
        #expect(MediaType(path: "notes.txt") == .other)
    }
}
