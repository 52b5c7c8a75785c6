import Foundation
import Testing
@testable import LFSyncSystem

/// An ext4 file system in a file, loop-mounted, whose bytes a test can change *under* the
/// file system: bit rot as a disk makes it. The file's size, times (its change time too)
/// and inode stay as they were, because the file system is never told — unlike any write
/// through it, which is an edit.
struct LoopDisk {
    let image: URL
    let mount: URL

    /// Why a loop-mounted ext4 cannot be made here, or nil.
    static let missing: String? = {
        guard geteuid() == 0 else { return "not root (mounting a loop file needs it)" }
        for tool in ["/usr/sbin/mkfs.ext4", "/usr/sbin/debugfs"] where !FileManager.default.isExecutableFile(atPath: tool) {
            return "\(tool) is missing ('make test-deps' installs e2fsprogs)"
        }
        return nil
    }()

    static let blockSize: UInt64 = 4096

    /// Makes and mounts a file system of `megabytes` at `root/<name>-disk`.
    init(_ name: String, in root: URL, megabytes: Int = 64) async throws {
        image = root.appendingPathComponent("\(name).img")
        mount = root.appendingPathComponent("\(name)-disk")
        try FileManager.default.createDirectory(at: mount, withIntermediateDirectories: true)
        let made = try await LFSyncProcess.shell(
            "truncate -s \(megabytes)M '\(image.path)' && mkfs.ext4 -q -F -b \(Self.blockSize) '\(image.path)' && mount -o loop '\(image.path)' '\(mount.path)'")
        try #require(made == 0, "could not make and mount \(image.path)")
    }

    /// Detaches the mount (lazily, however the test ends), before its folder is removed.
    func detach() {
        _ = umount2(mount.path, 2)  // MNT_DETACH
    }

    /// Flips one bit of the byte at `offset` of the file at `path` (below the mount) in the
    /// image itself, with the file system unmounted, then mounts it again.
    func rot(_ path: String, at offset: UInt64) async throws {
        let before = try FileStatus.of(path: mount.appendingPathComponent(path).path)
        try #require(try await LFSyncProcess.shell("umount '\(mount.path)'") == 0)
        let blocks = image.deletingLastPathComponent().appendingPathComponent("\(image.lastPathComponent).bmap")
        try #require(try await LFSyncProcess.shell(
            "debugfs -R 'bmap /\(path) \(offset / Self.blockSize)' '\(image.path)' > '\(blocks.path)' 2>/dev/null") == 0)
        let block = try #require(UInt64(String(contentsOf: blocks, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        try #require(block > 0, "\(path) has no block at \(offset)")
        let disk = try FileHandle(forUpdating: image)
        let position = block * Self.blockSize + offset % Self.blockSize
        try disk.seek(toOffset: position)
        let byte = try #require(try disk.read(upToCount: 1)?.first)
        try disk.seek(toOffset: position)
        try disk.write(contentsOf: [byte ^ 0x10])
        try disk.close()
        try #require(try await LFSyncProcess.shell("mount -o loop '\(image.path)' '\(mount.path)'") == 0)
        let after = try FileStatus.of(path: mount.appendingPathComponent(path).path)
        #expect(after.size == before.size && after.modificationTimeNs == before.modificationTimeNs
                && after.changeTimeNs == before.changeTimeNs && after.inode == before.inode, "the rot touched \(path)'s metadata")
    }
}
