import Foundation
import LocalFirstSync
import LFSyncSystem
import LFSyncCrypto
import LFSyncContent
import LFSyncStore
import LFSyncTransport
import LFSyncTCP
import LFSyncDiscovery

/// A small, reproducible photo library that exercises every grouping rule:
/// Live Photos paired by metadata (with matching and with unrelated names),
/// a Live Photo without metadata paired by name, RAW+JPEG with sidecars,
/// plain videos and documents, a corrupt HEIC, and a symlink leading out.
///
/// Media files are real containers (from `MediaFixtures`) padded with seeded
/// random bytes, so they are incompressible and sized like real photos.
public enum SampleLibrary {
    public struct Options: Sendable {
        /// Bytes of padding added to each photo; videos get ten times as much.
        public var photoPadding: Int
        public var seed: UInt64

        public init(photoPadding: Int = 1_500_000, seed: UInt64 = 2026) {
            self.photoPadding = photoPadding
            self.seed = seed
        }
    }

    /// Writes the library into `root` (created if needed) and returns the relative paths written.
    @discardableResult
    public static func write(at root: URL, options: Options = Options()) throws -> [String] {
        var random = SplitMix64(seed: options.seed)
        var written: [String] = []
        func padding(_ scale: Int) -> [UInt8] {
            random.bytes(options.photoPadding * scale + Int(random.next() % 4096))
        }
        func put(_ relative: String, _ bytes: [UInt8]) throws {
            let url = root.appendingPathComponent(relative)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(bytes).write(to: url)
            written.append(relative)
        }
        /// ISOBMFF readers skip unknown boxes, so padding rides in a trailing `free` box.
        func freeBox(_ payload: [UInt8]) -> [UInt8] {
            let size = UInt32(payload.count + 8)
            return [UInt8(size >> 24), UInt8(truncatingIfNeeded: size >> 16), UInt8(truncatingIfNeeded: size >> 8), UInt8(truncatingIfNeeded: size)]
                + Array("free".utf8) + payload
        }
        func uuid() -> String {
            let a = random.next(), b = random.next()
            return String(format: "%08llX-%04llX-%04llX-%04llX-%012llX",
                          a >> 32, (a >> 16) & 0xFFFF, a & 0xFFFF, b >> 48, b & 0xFFFF_FFFF_FFFF)
        }

        // Live Photos as an iPhone names them, identifiers in both halves.
        for number in 1...4 {
            let id = uuid()
            let stem = String(format: "DCIM/100APPLE/IMG_%04d", number)
            try put(stem + ".HEIC", MediaFixtures.liveStillHEIC(identifier: id) + freeBox(padding(1)))
            try put(stem + ".MOV", MediaFixtures.liveVideoMOV(identifier: id) + freeBox(padding(2)))
        }
        // A Live Photo whose halves were renamed apart: only metadata can pair them.
        let renamedID = uuid()
        try put("DCIM/100APPLE/IMG_0005.HEIC", MediaFixtures.liveStillHEIC(identifier: renamedID) + freeBox(padding(1)))
        try put("DCIM/100APPLE/motion-clip-from-phone.mov", MediaFixtures.liveVideoMOV(identifier: renamedID) + freeBox(padding(2)))
        // A JPEG Live Photo exported without metadata, with its edit sidecar: paired by name.
        try put("DCIM/100APPLE/IMG_0006.JPG", MediaFixtures.liveStillJPEG(identifier: nil) + padding(1))
        try put("DCIM/100APPLE/IMG_0006.MOV", MediaFixtures.liveVideoMOV(identifier: nil) + freeBox(padding(2)))
        try put("DCIM/100APPLE/IMG_0006.AAE", Array("<plist><dict><key>adjustmentFormatIdentifier</key></dict></plist>\n".utf8))
        // RAW+JPEG from a camera, one with an XMP sidecar for the RAW.
        for number in 100...101 {
            let stem = String(format: "Camera/DSC_%04d", number)
            try put(stem + ".NEF", padding(2))
            try put(stem + ".JPG", MediaFixtures.liveStillJPEG(identifier: nil) + padding(1))
        }
        try put("Camera/DSC_0100.NEF.xmp", Array("<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rating>5</rating></x:xmpmeta>\n".utf8))
        // Plain videos and documents.
        try put("Videos/birthday.mp4", freeBox(padding(10)))
        try put("Documents/recipes.pdf", Array("%PDF-1.7\n".utf8) + padding(0) + Array("\n%%EOF\n".utf8))
        try put("Documents/notes.txt", Array("Buy film. Back up the NAS.\n".utf8))
        // A HEIC cut short in transfer: a plain asset, never a crash.
        let broken = MediaFixtures.liveStillHEIC(identifier: uuid())
        try put("DCIM/100APPLE/IMG_0007.HEIC", Array(broken.prefix(broken.count / 2)))
        // A symlink leading out of the library: listed as skipped, never followed.
        let link = root.appendingPathComponent("Documents/outside-link")
        try? FileManager.default.removeItem(at: link)
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "/etc")
        return written
    }
}
