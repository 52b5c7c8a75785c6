import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import LocalFirstSync

/// What a household's `serve` does beyond receiving bytes, with real processes:
/// the modes files land with, `--chmod`, a library that does not exist yet,
/// trust withdrawn while a push runs, and a pull that brings only what the
/// puller's rules let through.
@Suite(.timeLimit(.minutes(3))) struct EverydayServeTests {
    typealias Device = PushServeTests.Device
    typealias Server = PushServeTests.Server

    static func mode(_ url: URL) -> UInt32? {
        var raw = stat()
        guard lstat(url.path, &raw) == 0 else { return nil }
        return UInt32(raw.st_mode & 0o7777)
    }

    /// Files with these modes on the laptop, and what each must become on nas under
    /// umask 022, umask 002, and umask 022 with `--chmod Fg+w,o-r`.
    static let modeCases: [(name: String, source: UInt32, under022: UInt32, under002: UInt32, chmodded: UInt32)] = [
        ("photo.jpg", 0o644, 0o644, 0o644, 0o640),
        ("shared.jpg", 0o664, 0o644, 0o664, 0o640),
        ("private.jpg", 0o600, 0o600, 0o600, 0o600),
        ("script.sh", 0o755, 0o755, 0o755, 0o751),
        ("setuid.bin", 0o4755, 0o755, 0o755, 0o751),
        ("world.txt", 0o666, 0o644, 0o664, 0o640),
    ]

    @Test(arguments: ["022", "002", "chmod"])
    func aReceivedFileGetsTheSourceModeUnderTheReceiversUmask(_ setting: String) async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let (laptop, nas) = try await PushServeTests.pair(root)
            let folder = laptop.library.appendingPathComponent("2026/Trip")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for (index, item) in Self.modeCases.enumerated() {
                let url = folder.appendingPathComponent(item.name)
                try Data("file \(index)".utf8).write(to: url)
                #expect(chmod(url.path, mode_t(item.source)) == 0)
            }
            let server = try await Server(nas, extra: setting == "chmod" ? ["--chmod", "Fg+w,o-r"] : [],
                                          umask: setting == "002" ? "002" : "022")
            defer { _ = server.stop() }
            #expect(try await laptop.run(["trust", nas.deviceID(), "--name", "nas", "--address", server.address]).status == 0)
            let push = try await laptop.run(["push", laptop.library.path, "--to", "nas"])
            #expect(push.status == 0, "\(push.stderr)")
            for item in Self.modeCases {
                let expected = setting == "002" ? item.under002 : setting == "chmod" ? item.chmodded : item.under022
                let landed = Self.mode(nas.library.appendingPathComponent("2026/Trip/\(item.name)"))
                #expect(landed == expected, "\(item.name): \(String(landed ?? 0, radix: 8)), expected \(String(expected, radix: 8)) (\(setting))")
            }
            // New folders: mkdir's mode, 0777 less the umask (after the rules that name no F:
            // `o-r` applies to folders too, `Fg+w` does not).
            let folderMode: UInt32 = setting == "002" ? 0o775 : setting == "chmod" ? 0o751 : 0o755
            #expect(Self.mode(nas.library.appendingPathComponent("2026")) == folderMode)
            #expect(Self.mode(nas.library.appendingPathComponent("2026/Trip")) == folderMode)
            // Staging stays private whatever the umask.
            #expect(Self.mode(nas.library.appendingPathComponent(".lfsync/staging")) == 0o700)
        }
    }

    /// The README's own example for a shared household folder: new folders keep their
    /// parent's group (setgid, which `mkdir` alone drops), files group-writable.
    @Test func theReadmesChmodGivesNewFoldersTheSetgidBit() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let (laptop, nas) = try await PushServeTests.pair(root)
            let folder = laptop.library.appendingPathComponent("2026/Trip")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let files: [(name: String, source: UInt32, landed: UInt32)] = [
                ("photo.jpg", 0o644, 0o664), ("private.jpg", 0o600, 0o660), ("script.sh", 0o755, 0o775), ("world.txt", 0o666, 0o664),
            ]
            for item in files {
                let url = folder.appendingPathComponent(item.name)
                try Data(item.name.utf8).write(to: url)
                #expect(chmod(url.path, mode_t(item.source)) == 0)
            }
            let server = try await Server(nas, extra: ["--chmod", "Dg+s,ug+rw,Fo-w"], umask: "002")
            defer { _ = server.stop() }
            #expect(try await laptop.run(["trust", nas.deviceID(), "--name", "nas", "--address", server.address]).status == 0)
            let push = try await laptop.run(["push", laptop.library.path, "--to", "nas"])
            #expect(push.status == 0, "\(push.stderr)")
            for folder in ["2026", "2026/Trip"] {
                let mode = Self.mode(nas.library.appendingPathComponent(folder))
                #expect(mode == 0o2775, "\(folder): \(String(mode ?? 0, radix: 8))")
            }
            for item in files {
                let mode = Self.mode(nas.library.appendingPathComponent("2026/Trip/\(item.name)"))
                #expect(mode == item.landed, "\(item.name): \(String(mode ?? 0, radix: 8))")
            }
            #expect(Self.mode(nas.library.appendingPathComponent(".lfsync/staging")) == 0o700)
        }
    }

    @Test func serveCreatesAMissingLibraryButNotItsParents() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let (_, nas) = try await PushServeTests.pair(root)
            let fresh = root.appendingPathComponent("photos-not-yet")
            let server = try await Server(nas, library: fresh)
            let log = server.stop()
            #expect(log.contains("created the library folder \(fresh.path)"), "\(log)")
            var isDirectory: ObjCBool = false
            #expect(FileManager.default.fileExists(atPath: fresh.path, isDirectory: &isDirectory) && isDirectory.boolValue)

            let orphan = root.appendingPathComponent("no-such-parent/photos")
            let refused = try await LFSyncProcess.run(["serve", orphan.path, "--listen", "127.0.0.1:0", "--no-advertise"], home: nas.home, timeLimit: 20)
            #expect(refused.status == 74, "\(refused.stderr)")
            #expect(refused.stderr.contains("its parent folder does not exist"), "\(refused.stderr)")
            #expect(!FileManager.default.fileExists(atPath: root.appendingPathComponent("no-such-parent").path))
        }
    }

    /// `lfsync untrust` on the receiving device while a (rate-limited, so slow) push
    /// runs: the running serve cuts the connection within seconds, logs it, and
    /// keeps none of the file; the push fails instead of finishing.
    @Test func untrustOnARunningServeCutsTheDeviceOff() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let (laptop, nas) = try await PushServeTests.pair(root)
            var generator = SystemRandomNumberGenerator()
            let big = Data((0..<(12 << 20)).map { _ in UInt8.random(in: 0...255, using: &generator) })
            try big.write(to: laptop.library.appendingPathComponent("movie.mov"))
            let server = try await Server(nas)
            defer { _ = server.stop() }
            #expect(try await laptop.run(["trust", nas.deviceID(), "--name", "nas", "--address", server.address]).status == 0)
            // 1 MiB/s: twelve seconds of pushing, of which the first few are enough.
            async let push = laptop.run(["push", laptop.library.path, "--to", "nas", "--bwlimit", "1M"])
            try await WatchTests.eventually("the push under way", seconds: 30) {
                let staging = nas.library.appendingPathComponent(".lfsync/staging").path
                return !((try? FileManager.default.contentsOfDirectory(atPath: staging)) ?? []).isEmpty
            }
            let untrusted = ContinuousClock.now
            #expect(try await nas.run(["untrust", "laptop"]).status == 0)
            let result = try await push
            #expect(ContinuousClock.now - untrusted < .seconds(8), "the push went on after untrust")
            #expect(result.status != 0, "\(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: nas.library.appendingPathComponent("movie.mov").path))
            #expect(server.stop().contains("is no longer trusted: closing its connection"))
        }
    }

    /// A pull applies the serving side's rules (its defaults) and the puller's own:
    /// `--exclude` and the puller's `.lfsyncignore` are sent with the request, and
    /// what they match never crosses the link.
    @Test func aPullBringsOnlyWhatBothSidesRulesLetThrough() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let (laptop, nas) = try await PushServeTests.pair(root)
            let files = ["IMG_1.JPG", "clip.MOV", "Private/secret.jpg", "keep/IMG_2.JPG", "keep/.DS_Store", "Thumbs.db"]
            for name in files {
                let url = laptop.library.appendingPathComponent(name)
                try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                try Data("bytes of \(name)".utf8).write(to: url)
            }
            try Data("Private/\n".utf8).write(to: nas.library.appendingPathComponent(".lfsyncignore"))
            #expect(try await laptop.run(["trust", nas.deviceID(), "--name", "nas", "--allow-pull"]).status == 0)
            let server = try await Server(laptop)
            defer { _ = server.stop() }
            #expect(try await nas.run(["trust", laptop.deviceID(), "--name", "laptop", "--address", server.address]).status == 0)
            let pulled = try await nas.run(["pull", "--from", "laptop", nas.library.path, "--exclude", "*.MOV"])
            #expect(pulled.status == 0, "\(pulled.stderr)")
            let received = try PushServeTests.tree(nas.library).keys.filter { $0 != ".lfsyncignore" }.sorted()
            #expect(received == ["IMG_1.JPG", "keep/IMG_2.JPG"])
        }
    }
}
