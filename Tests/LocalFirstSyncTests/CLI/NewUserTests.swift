import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import LFSyncFixtures
@testable import LocalFirstSync
@testable import LFSyncSystem
@testable import LFSyncLanding

/// What a new user trips over (issue 47), tried as they would, with real processes: a
/// restore after a file was deleted by hand, a folder of a library pushed or asked about,
/// JSON that is JSON, usage mistakes that are usage errors, messages that say what to do,
/// and a cron run that says only what is news. Each case failed before its fix.
@Suite(.timeLimit(.minutes(4))) struct NewUserTests {
    typealias Device = PushServeTests.Device
    typealias Server = PushServeTests.Server

    static func json(_ text: String) -> Any? {
        try? JSONSerialization.jsonObject(with: Data(text.utf8))
    }

    /// RFC 3339, UTC, milliseconds: the one time format of every JSON output.
    static func isRFC3339(_ text: String) -> Bool {
        let pattern = "dddd-dd-ddTdd:dd:dd.dddZ"
        return text.count == pattern.count && zip(text, pattern).allSatisfy { char, shape in shape == "d" ? char.isASCII && char.isNumber : char == shape }
    }

    /// Every value under a key that names a time (`at`, `time`), anywhere in `object`.
    static func times(in object: Any?) -> [Any] {
        switch object {
        case let dictionary as [String: Any]:
            dictionary.flatMap { key, value in (key == "at" || key == "time" || key.hasSuffix("At")) ? [value] : times(in: value) }
        case let array as [Any]:
            array.flatMap { times(in: $0) }
        default:
            []
        }
    }

    @Test func pullBringsBackAFileDeletedByHandAndFillsANewEmptyFolder() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let home = try await HoldingsTests.household(root, pushTo: ["nas"])
            defer { home.stop() }
            let victim = "DCIM/100APPLE/IMG_0002.HEIC"
            try FileManager.default.removeItem(at: home.laptop.library.appendingPathComponent(victim))
            let pull = try await home.laptop.run(["pull", "--from", "nas", home.laptop.library.path])
            #expect(pull.status == 0, "\(pull.stderr)")
            #expect(try HoldingsTests.files(home.laptop) == home.original, "\(pull.stderr)")
            // A new, empty folder gets everything the nas holds.
            let fresh = root.appendingPathComponent("fresh")
            try FileManager.default.createDirectory(at: fresh, withIntermediateDirectories: true)
            let again = try await home.laptop.run(["pull", "--from", "nas", fresh.path])
            #expect(again.status == 0, "\(again.stderr)")
            #expect(try EngineHarness.tree(fresh).filter { !$0.key.hasPrefix(".lfsync") } == home.original)
        }
    }

    /// `push LIB/2024/02`: the folder's files land at 2024/02 under the peer's library (as
    /// `rsync -R` keeps them), not at its root; `status` and `whereis` of a folder answer from
    /// the library; a path in no library is an error, never a new index.
    @Test func aFolderOfALibraryKeepsItsPlaceAndAPathOutsideEveryLibraryIsAnError() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let home = try await HoldingsTests.household(root, pushTo: ["nas"])
            defer { home.stop() }
            let library = home.laptop.library
            let indexes = { try FileManager.default.contentsOfDirectory(atPath: home.laptop.home.appendingPathComponent("libraries").path).filter { $0.hasSuffix(".sqlite") }.count }
            let before = try indexes()
            let push = try await home.laptop.run(["push", library.appendingPathComponent("Camera").path, "--to", "desktop"])
            #expect(push.status == 0, "\(push.stderr)")
            let landed = try EngineHarness.tree(home.desktop.library).keys.filter { !$0.hasPrefix(".lfsync") }.sorted()
            #expect(landed == home.original.keys.filter { $0.hasPrefix("Camera/") }.sorted(), "\(landed)")
            let status = try await home.laptop.run(["status", library.appendingPathComponent("Camera").path, "--peer", "desktop"])
            #expect(status.stdout.contains("2 synced"), "\(status.stdout)")
            #expect(try indexes() == before, "a folder was indexed as a library of its own")
            let outside = root.appendingPathComponent("elsewhere")
            try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
            for command in [["whereis", outside.path], ["status", outside.path]] {
                let refused = try await home.laptop.run(command)
                #expect(refused.status == 64 && refused.stderr.contains("not in a library lfsync knows"), "\(command): \(refused.stderr)")
            }
            #expect(try indexes() == before)
        }
    }

    @Test func everyJSONTimeIsRFC3339AndJSONIsJSON() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let home = try await HoldingsTests.household(root, pushTo: ["nas"])
            defer { home.stop() }
            let library = home.laptop.library
            let whereis = try await home.laptop.run(["whereis", library.path, "--json"])
            let times = Self.times(in: Self.json(whereis.stdout))
            #expect(!times.isEmpty, "whereis --json has no times: \(whereis.stdout.prefix(300))")
            for time in times {
                #expect((time as? String).map(Self.isRFC3339) == true, "not RFC 3339: \(time)")
            }
            // A dry run as JSON, and the files it would send with -v.
            try TestSupport.write(Array("new".utf8), to: library.appendingPathComponent("Documents/new.txt"))
            let dry = try await home.laptop.run(["push", library.path, "--to", "nas", "--dry-run", "--json", "-v"])
            #expect(dry.status == 0, "\(dry.stderr)")
            let report = Self.json(dry.stdout) as? [String: Any]
            let targets = report?["targets"] as? [[String: Any]]
            #expect(report?["dryRun"] as? Bool == true && targets?.first?["notSynced"] as? Int == 1, "\(dry.stdout)")
            #expect(targets?.first?["paths"] as? [String] == ["Documents/new.txt"], "\(dry.stdout)")
            let text = try await home.laptop.run(["push", library.path, "--to", "nas", "--dry-run", "-v"])
            #expect(text.stdout.contains("    Documents/new.txt"), "\(text.stdout)")
            // --progress json: stderr is JSON lines only, to the end.
            let progress = try await home.laptop.run(["push", library.path, "--to", "nas,desktop", "--progress", "json"])
            let lines = progress.stderr.split(separator: "\n")
            #expect(!lines.isEmpty)
            for line in lines {
                let object = Self.json(String(line)) as? [String: Any]
                #expect(object != nil, "a line of --progress json that is not JSON: \(line)")
                if let time = object?["time"] as? String { #expect(Self.isRFC3339(time), "\(time)") }
            }
            // pull: --dry-run receives nothing and says what it would; --json.
            try FileManager.default.removeItem(at: library.appendingPathComponent("DCIM/100APPLE/IMG_0003.HEIC"))
            let wouldPull = try await home.laptop.run(["pull", "--from", "nas", library.path, "--dry-run", "--json"])
            #expect(wouldPull.status == 0, "\(wouldPull.stderr)")
            let wouldReport = Self.json(wouldPull.stdout) as? [String: Any]
            #expect(wouldReport?["dryRun"] as? Bool == true && (wouldReport?["wouldReceiveFiles"] as? Int ?? 0) >= 1, "\(wouldPull.stdout)")
            #expect(!FileManager.default.fileExists(atPath: library.appendingPathComponent("DCIM/100APPLE/IMG_0003.HEIC").path))
            let pulled = try await home.laptop.run(["pull", "--from", "nas", library.path, "--json"])
            let pulledReport = Self.json(pulled.stdout) as? [String: Any]
            #expect(pulled.status == 0 && (pulledReport?["assetsReceived"] as? Int ?? 0) >= 1, "\(pulled.stdout) \(pulled.stderr)")
        }
    }

    @Test func usageMistakesAreUsageErrorsAndGlobalOptionsGoAnywhere() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let device = try Device("laptop", in: root)
            #expect(try await device.run(["init", "--name", "laptop"]).status == 0)
            let both = try await device.run(["push", device.library.path, "--to", "nas", "--all"])
            #expect(both.status == 64 && both.stderr.contains("--to and --all"), "\(both.stderr)")
            let early = try await device.run(["-v", "status"])
            #expect(early.status == 0, "\(early.stderr)")
            #expect(early.stderr.contains("'lfsync status PATH -v' lists the assets"), "\(early.stderr)")
            let help = try await device.run(["pull", "--help"])
            #expect(help.stdout.contains("Receive at most RATE") && !help.stdout.contains("Send at most RATE"), "\(help.stdout)")
            // verify with no PATH, outside every library: refused, not a re-hash of the current folder.
            let verify = try await LFSyncProcess.run(["verify"], home: device.home)
            #expect(verify.status == 64 && verify.stderr.contains("verify needs a library"), "\(verify.stderr)")
        }
    }

    @Test func messagesSayWhatToDo() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            // A nas that does not accept this laptop's pushes unasked, and has no terminal to ask.
            let (laptop, nas) = try await PushServeTests.pair(root, autoAccept: false)
            let server = try await Server(nas)
            defer { _ = server.stop() }
            #expect(try await laptop.run(["trust", nas.deviceID(), "--name", "nas", "--address", server.address]).status == 0)
            try EngineHarness.writeSample(at: laptop.library, padding: 5_000)
            let declined = try await laptop.run(["push", laptop.library.path, "--to", "nas"])
            #expect(declined.status == 77, "\(declined.stderr)")
            #expect(declined.stderr.contains("--auto-accept' accepts this device's pushes"), "\(declined.stderr)")
            #expect(!declined.stderr.contains("declined: declined"), "\(declined.stderr)")
            // Nobody listening at the address.
            let gone = server.stop()
            _ = gone
            let unreachable = try await laptop.run(["push", laptop.library.path, "--to", "nas"])
            #expect(unreachable.status == 69 && unreachable.stderr.contains("is 'lfsync serve' running on nas?"), "\(unreachable.stderr)")
        }
        // Sizes people can read, and a full disk said in words.
        let space = ReceiveError.insufficientSpace(needed: 5_156_120, available: 3_145_728, reserved: 31_457)
        #expect(space.description == "not enough free space: needs 5.2 MB, 3.1 MB available of which 31.5 kB are kept free", "\(space)")
        let full = ReceiveError.system(SystemError("pwrite", path: ".lfsync/staging/ab.partial", errno: ENOSPC))
        #expect(full.description.hasPrefix("the receiving disk is full"), "\(full)")
    }

    /// Item 8: a receiver whose disk has room for part of a push takes that part: the files
    /// that fit land whole, each one that does not is named with the reason in words, the
    /// run exits 1, and once the disk has grown the next push brings the rest.
    @Test(.enabled(if: LoopDisk.missing == nil, "a small real disk needs a loop-mounted ext4: \(LoopDisk.missing ?? "")"))
    func aFullReceiverTakesTheFilesThatFit() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let disk = try await LoopDisk("nas", in: root, megabytes: 40)
            defer { disk.detach() }
            let laptop = try Device("laptop", in: root)
            let nas = Device("nas", home: root.appendingPathComponent("nas-state"), library: disk.mount.appendingPathComponent("Photos"))
            try FileManager.default.createDirectory(at: nas.library, withIntermediateDirectories: true)
            #expect(try await laptop.run(["init", "--name", "laptop"]).status == 0)
            #expect(try await nas.run(["init", "--name", "nas"]).status == 0)
            #expect(try await nas.run(["trust", laptop.deviceID(), "--name", "laptop", "--auto-accept"]).status == 0)
            let server = try await Server(nas)
            defer { _ = server.stop() }
            #expect(try await laptop.run(["trust", nas.deviceID(), "--name", "nas", "--address", server.address]).status == 0)
            // Eight photos of 2 MiB on a disk with room for about half of them: the rest of
            // it is taken by something else of the nas's.
            var space = statvfs()
            try #require(statvfs(disk.mount.path, &space) == 0)
            let free = Int(space.f_bavail) * Int(space.f_frsize)
            try #require(free > 20 << 20, "the test disk has \(free) bytes free")
            let filler = disk.mount.appendingPathComponent("other-things.bin")
            try TestSupport.write([UInt8](repeating: 1, count: free - (9 << 20)), to: filler)
            var photos: [String: [UInt8]] = [:]
            for index in 1...8 {
                var generator = SplitMix64(seed: UInt64(index))
                let name = "DCIM/IMG_000\(index).JPG"
                photos[name] = generator.bytes(2 << 20)
                try TestSupport.write(photos[name] ?? [], to: laptop.library.appendingPathComponent(name))
            }
            let first = try await laptop.run(["push", laptop.library.path, "--to", "nas"])
            #expect(first.status == 1, "\(first.stderr)")
            #expect(first.stderr.contains("not enough free space: needs 2.1 MB"), "sizes in words, per file: \(first.stderr)")
            #expect(first.stderr.contains("IMG_000"), "the files not taken are named: \(first.stderr)")
            let landed = photos.keys.filter { FileManager.default.fileExists(atPath: nas.library.appendingPathComponent($0).path) }
            #expect(landed.count >= 2 && landed.count < 8, "\(landed.count) of 8 landed: \(first.stderr)")
            for name in landed {
                #expect(try Array(Data(contentsOf: nas.library.appendingPathComponent(name))) == photos[name], "\(name) landed changed")
            }
            let log = (try? String(contentsOf: server.log, encoding: .utf8)) ?? ""
            #expect(!log.contains("refused offer"), "the whole offer was refused: \(log)")

            // Room is made on the nas: the next push brings the rest.
            try FileManager.default.removeItem(at: filler)
            let second = try await laptop.run(["push", laptop.library.path, "--to", "nas"])
            #expect(second.status == 0, "\(second.stderr)")
            for (name, bytes) in photos {
                #expect((try? Array(Data(contentsOf: nas.library.appendingPathComponent(name)))) == bytes, "\(name) is not on the nas whole")
            }
        }
    }

    /// A nightly run reports a skipped file once, not every night; a file that could not be
    /// read makes the run exit 1 (as rsync's 23), a symbolic link does not.
    @Test(.enabled(if: geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"), "needs root and setpriv to run lfsync as another user"))
    func aSkipIsReportedOnceAndAnUnreadableFileFailsTheRun() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let (laptop, nas) = try await PushServeTests.pair(root)
            let server = try await Server(nas)
            defer { _ = server.stop() }
            #expect(try await laptop.run(["trust", nas.deviceID(), "--name", "nas", "--address", server.address]).status == 0)
            try EngineHarness.writeSample(at: laptop.library, padding: 5_000)
            try FileManager.default.createSymbolicLink(atPath: laptop.library.appendingPathComponent("link.jpg").path, withDestinationPath: "/etc/hostname")
            let first = try await laptop.run(["push", laptop.library.path, "--to", "nas", "--batch"])
            #expect(first.status == 0, "\(first.stderr)")
            #expect(first.stderr.contains("newly skipped") && first.stderr.contains("link.jpg"), "\(first.stderr)")
            let second = try await laptop.run(["push", laptop.library.path, "--to", "nas", "--batch"])
            #expect(second.status == 0 && second.stderr.isEmpty, "cron would mail this every night: \(second.stderr)")
            let verbose = try await laptop.run(["push", laptop.library.path, "--to", "nas", "-v"])
            #expect(verbose.stderr.contains("skipped link.jpg"), "\(verbose.stderr)")

            // The same push as another user, to whom one file is unreadable.
            let secret = laptop.library.appendingPathComponent("Documents/secret.txt")
            try TestSupport.write(Array("mine".utf8), to: secret)
            #expect(chmod(secret.path, 0) == 0)
            #expect(try await LFSyncProcess.shell(
                "find '\(root.path)' -type d -exec chmod a+rwx {} + && chown -R 65534:65534 '\(laptop.home.path)' && chmod 000 '\(secret.path)'") == 0)
            let asNobody = try await LFSyncProcess.shell(
                "LFSYNC_HOME='\(laptop.home.path)' setpriv --reuid=65534 --regid=65534 --clear-groups '\(LFSyncProcess.binary.path)' push '\(laptop.library.path)' --to nas --batch 2>'\(root.path)/nobody.err'")
            let stderr = (try? String(contentsOf: root.appendingPathComponent("nobody.err"), encoding: .utf8)) ?? ""
            #expect(asNobody == 1, "an unreadable file was not sent, and the run said 0: \(stderr)")
            #expect(stderr.contains("secret.txt"), "\(stderr)")
        }
    }

    /// Ctrl-C on a push: it says so, stops cleanly, and exits 130.
    @Test func ctrlCOnAPushSaysWhatHappened() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let (laptop, nas) = try await PushServeTests.pair(root)
            let server = try await Server(nas)
            defer { _ = server.stop() }
            #expect(try await laptop.run(["trust", nas.deviceID(), "--name", "nas", "--address", server.address]).status == 0)
            var generator = SplitMix64(seed: 3)
            for index in 0..<20 { try TestSupport.write(generator.bytes(500_000), to: laptop.library.appendingPathComponent("IMG_\(index).JPG")) }
            let process = Process()
            process.executableURL = LFSyncProcess.binary
            process.arguments = ["push", laptop.library.path, "--to", "nas", "--bwlimit", "1M"]
            process.environment = ProcessInfo.processInfo.environment.merging(["LFSYNC_HOME": laptop.home.path]) { _, new in new }
            let err = Pipe()
            (process.standardOutput, process.standardError) = (FileHandle.nullDevice, err)
            try process.run()
            try await Task.sleep(for: .seconds(3))
            kill(process.processIdentifier, SIGINT)
            let stderr = try await Task.detached { String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) }.value
            process.waitUntilExit()
            #expect(process.terminationStatus == 130, "\(stderr)")
            #expect(stderr.contains("interrupted (Ctrl-C)") && stderr.contains("the next push"), "\(stderr)")
        }
    }
}
