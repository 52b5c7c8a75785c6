import Foundation
import Testing
@testable import LFSyncFixtures
@testable import LocalFirstSync
@testable import LFSyncContent
@testable import LFSyncSystem

@Suite("Asset grouping")
struct AssetGrouperTests {
    let idA = MediaFixtures.identifier
    let idB = MediaFixtures.otherIdentifier

    /// Groups and renders each asset as "role:path" strings, for compact expectations.
    func grouped(_ candidates: [GroupingCandidate]) -> [[String]] {
        AssetGrouper.group(candidates).map { $0.members.map { "\($0.role):\($0.path)" } }
    }

    func files(_ paths: String...) -> [GroupingCandidate] {
        paths.map { GroupingCandidate(path: RelativePath($0)) }
    }

    // MARK: Live Photos

    @Test("Live Photo by metadata pairs a still and a video with unrelated names")
    func livePhotoByMetadata() {
        let result = grouped([
            GroupingCandidate(path: "DCIM/100APPLE/holiday.HEIC", contentIdentifier: idA),
            GroupingCandidate(path: "DCIM/100APPLE/export_77.mov", contentIdentifier: idA),
        ])
        #expect(result == [["primary:DCIM/100APPLE/holiday.HEIC", "livePhotoVideo:DCIM/100APPLE/export_77.mov"]])
    }

    @Test("Real fixture files: identifiers read from disk group a HEIC and a MOV with unrelated names")
    func livePhotoFromFiles() throws {
        let directory = try MediaFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try MediaFixtures.write(MediaFixtures.heic(identifier: idA), named: "sunset.HEIC", in: directory)
        try MediaFixtures.write(MediaFixtures.mov(identifier: idA), named: "IMG_9999.MOV", in: directory)
        try MediaFixtures.write(MediaFixtures.mov(identifier: idB), named: "sunset.MOV", in: directory)
        let candidates = try FileManager.default.contentsOfDirectory(atPath: directory.path).map { name in
            GroupingCandidate(path: RelativePath("trip/" + name),
                              contentIdentifier: AppleContentIdentifierReader.contentIdentifier(ofFileAt: directory.appendingPathComponent(name)))
        }
        #expect(grouped(candidates) == [
            ["primary:trip/sunset.HEIC", "livePhotoVideo:trip/IMG_9999.MOV"],
            ["primary:trip/sunset.MOV"],
        ])
    }

    @Test("Basename fallback pairs IMG_0001.HEIC and IMG_0001.MOV without metadata, case-insensitively")
    func basenameFallback() {
        #expect(grouped(files("IMG_0001.HEIC", "IMG_0001.MOV")) == [["primary:IMG_0001.HEIC", "livePhotoVideo:IMG_0001.MOV"]])
        #expect(grouped(files("a/img_0002.heic", "a/IMG_0002.mov")) == [["primary:a/img_0002.heic", "livePhotoVideo:a/IMG_0002.mov"]])
        #expect(grouped(files("IMG_0003.JPG", "IMG_0003.MP4")) == [["primary:IMG_0003.JPG", "livePhotoVideo:IMG_0003.MP4"]])
    }

    /// Names compare by bytes (`NameKey`): "Café" spelled NFC and NFD are two names on
    /// Linux, so they pair neither as a Live Photo nor with a sidecar; the same spelling does.
    @Test("Normalisation twins do not pair by basename; the same spelling does")
    func normalisationTwinsDoNotPair() {
        let nfc = "Caf\u{E9}", nfd = "Cafe\u{301}"
        #expect(grouped(files("\(nfc).HEIC", "\(nfd).MOV")).count == 2)
        #expect(grouped(files("\(nfc).JPG", "\(nfd).XMP")).count == 2)
        #expect(grouped(files("\(nfc).HEIC", "\(nfc).MOV")) == [["primary:\(nfc).HEIC", "livePhotoVideo:\(nfc).MOV"]])
        #expect(grouped(files("\(nfd).JPG", "\(nfd).XMP")) == [["primary:\(nfd).JPG", "sidecar:\(nfd).XMP"]])
    }

    @Test("Basename fallback applies when only one side has an identifier")
    func basenameFallbackOneSided() {
        let result = grouped([
            GroupingCandidate(path: "IMG_0001.HEIC", contentIdentifier: idA),
            GroupingCandidate(path: "IMG_0001.MOV"),
        ])
        #expect(result == [["primary:IMG_0001.HEIC", "livePhotoVideo:IMG_0001.MOV"]])
    }

    @Test("Different identifiers with the same basename do not pair")
    func differingIdentifiers() {
        let result = grouped([
            GroupingCandidate(path: "IMG_0001.HEIC", contentIdentifier: idA),
            GroupingCandidate(path: "IMG_0001.MOV", contentIdentifier: idB),
        ])
        #expect(result == [["primary:IMG_0001.HEIC"], ["primary:IMG_0001.MOV"]])
    }

    @Test("Metadata wins over names: the same-named video stays alone when the still paired by identifier")
    func metadataBeforeBasename() {
        let result = grouped([
            GroupingCandidate(path: "IMG_0001.HEIC", contentIdentifier: idA),
            GroupingCandidate(path: "IMG_0001.MOV"),
            GroupingCandidate(path: "renamed.MOV", contentIdentifier: idA),
        ])
        #expect(result == [
            ["primary:IMG_0001.HEIC", "livePhotoVideo:renamed.MOV"],
            ["primary:IMG_0001.MOV"],
        ])
    }

    @Test("Several files sharing one identifier pair in path order; leftovers stay alone")
    func sharedIdentifier() {
        let result = grouped([
            GroupingCandidate(path: "b.HEIC", contentIdentifier: idA),
            GroupingCandidate(path: "z.MOV", contentIdentifier: idA),
            GroupingCandidate(path: "a.HEIC", contentIdentifier: idA),
            GroupingCandidate(path: "y.MOV", contentIdentifier: idA),
            GroupingCandidate(path: "c.JPG", contentIdentifier: idA),
        ])
        #expect(result == [
            ["primary:a.HEIC", "livePhotoVideo:y.MOV"],
            ["primary:b.HEIC", "livePhotoVideo:z.MOV"],
            ["primary:c.JPG"],
        ])
    }

    @Test("Pairing never crosses directories, even with equal identifiers")
    func sameDirectoryOnly() {
        #expect(grouped(files("a/IMG_1.HEIC", "b/IMG_1.MOV")) == [["primary:a/IMG_1.HEIC"], ["primary:b/IMG_1.MOV"]])
        let result = grouped([
            GroupingCandidate(path: "a/x.HEIC", contentIdentifier: idA),
            GroupingCandidate(path: "b/y.MOV", contentIdentifier: idA),
        ])
        #expect(result == [["primary:a/x.HEIC"], ["primary:b/y.MOV"]])
    }

    @Test("Names alone do not make a PNG and a video a Live Photo; metadata does")
    func nonLivePhotoFormats() {
        #expect(grouped(files("holiday.png", "holiday.mov")) == [["primary:holiday.mov"], ["primary:holiday.png"]])
        let result = grouped([
            GroupingCandidate(path: "holiday.png", contentIdentifier: idA),
            GroupingCandidate(path: "holiday.mov", contentIdentifier: idA),
        ])
        #expect(result == [["primary:holiday.png", "livePhotoVideo:holiday.mov"]])
    }

    // MARK: RAW

    @Test("RAW + JPEG with the same stem form one asset; a lone RAW is primary")
    func rawPlusJPEG() {
        #expect(grouped(files("DSC_0001.NEF", "DSC_0001.JPG")) == [["primary:DSC_0001.JPG", "raw:DSC_0001.NEF"]])
        #expect(grouped(files("img_2.cr2", "IMG_2.heic")) == [["primary:IMG_2.heic", "raw:img_2.cr2"]])
        #expect(grouped(files("IMG_3.DNG")) == [["primary:IMG_3.DNG"]])
    }

    @Test("RAW, JPEG and Live Photo video of one shot land as one asset")
    func rawWithLivePhoto() {
        #expect(grouped(files("IMG_4.DNG", "IMG_4.JPG", "IMG_4.MOV", "IMG_4.AAE")) == [
            // Members in role order: primary, Live Photo video, raw, sidecars.
            ["primary:IMG_4.JPG", "livePhotoVideo:IMG_4.MOV", "raw:IMG_4.DNG", "sidecar:IMG_4.AAE"],
        ])
    }

    // MARK: Sidecars

    @Test("X.AAE joins the asset whose primary has stem X")
    func aaeSidecar() {
        #expect(grouped(files("IMG_0001.HEIC", "IMG_0001.MOV", "IMG_0001.AAE")) == [
            ["primary:IMG_0001.HEIC", "livePhotoVideo:IMG_0001.MOV", "sidecar:IMG_0001.AAE"],
        ])
        #expect(grouped(files("IMG_0002.JPG", "img_0002.aae")) == [["primary:IMG_0002.JPG", "sidecar:img_0002.aae"]])
    }

    @Test("X.xmp joins the asset whose primary or RAW has stem X")
    func xmpSidecar() {
        #expect(grouped(files("DSC_1.ARW", "DSC_1.xmp")) == [["primary:DSC_1.ARW", "sidecar:DSC_1.xmp"]])
        #expect(grouped(files("DSC_2.ARW", "DSC_2.JPG", "DSC_2.XMP")) == [["primary:DSC_2.JPG", "raw:DSC_2.ARW", "sidecar:DSC_2.XMP"]])
    }

    @Test("X.ext.xmp joins exactly the file X.ext")
    func extXMPSidecar() {
        #expect(grouped(files("photo.JPG", "photo.PNG", "photo.PNG.xmp")) == [
            ["primary:photo.JPG"],
            ["primary:photo.PNG", "sidecar:photo.PNG.xmp"],
        ])
        #expect(grouped(files("DSC_3.NEF", "DSC_3.JPG", "DSC_3.NEF.xmp", "DSC_3.JPG.xmp")) == [
            ["primary:DSC_3.JPG", "raw:DSC_3.NEF", "sidecar:DSC_3.JPG.xmp", "sidecar:DSC_3.NEF.xmp"],
        ])
        #expect(grouped(files("IMG_5.HEIC", "IMG_5.MOV", "IMG_5.MOV.xmp")) == [
            ["primary:IMG_5.HEIC", "livePhotoVideo:IMG_5.MOV", "sidecar:IMG_5.MOV.xmp"],
        ])
        // A dotted stem without a matching file falls back to the stem rule.
        #expect(grouped(files("v1.2.jpg", "v1.2.xmp")) == [["primary:v1.2.jpg", "sidecar:v1.2.xmp"]])
    }

    @Test("Sidecars without an owner are their own assets")
    func orphanSidecars() {
        #expect(grouped(files("IMG_9.AAE", "other.xmp", "gone.JPG.xmp")) == [
            ["primary:IMG_9.AAE"], ["primary:gone.JPG.xmp"], ["primary:other.xmp"],
        ])
        #expect(grouped(files("a/IMG_1.JPG", "b/IMG_1.AAE")) == [["primary:a/IMG_1.JPG"], ["primary:b/IMG_1.AAE"]])
    }

    // MARK: Everything else

    @Test("Other files are single-file assets")
    func otherFiles() {
        #expect(grouped(files("notes.txt", ".hidden", "README", "clip.mkv")) == [
            ["primary:.hidden"], ["primary:README"], ["primary:clip.mkv"], ["primary:notes.txt"],
        ])
    }

    @Test("Output is deterministic: independent of input order, sorted by primary path, duplicates ignored")
    func determinism() {
        var candidates = [
            GroupingCandidate(path: "x/IMG_1.HEIC", contentIdentifier: idA),
            GroupingCandidate(path: "x/IMG_1.MOV", contentIdentifier: idA),
            GroupingCandidate(path: "x/IMG_1.AAE"),
            GroupingCandidate(path: "x/DSC_1.NEF"),
            GroupingCandidate(path: "x/DSC_1.JPG"),
            GroupingCandidate(path: "x/DSC_1.NEF.xmp"),
            GroupingCandidate(path: "y/IMG_1.HEIC"),
            GroupingCandidate(path: "y/IMG_1.MOV"),
            GroupingCandidate(path: "a.txt"),
            GroupingCandidate(path: "z/orphan.xmp"),
        ]
        let expected = AssetGrouper.group(candidates)
        #expect(expected.map(\.primaryPath) == expected.map(\.primaryPath).sorted())
        #expect(expected.count == 5)
        var random = SplitMix64(seed: 7)
        for _ in 0..<50 {
            candidates.shuffle(using: &random)
            #expect(AssetGrouper.group(candidates + candidates.prefix(3)) == expected)
        }
    }
}
