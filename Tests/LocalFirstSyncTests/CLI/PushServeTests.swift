import Foundation
import Testing
@testable import LFSyncFixtures
@testable import LocalFirstSync
@testable import LFSyncSystem

/// End to end with real `lfsync` processes on loopback: init, trust, serve,
/// push, status, pull; declines, unreachable peers, batch exit codes and the lock.
@Suite(.timeLimit(.minutes(3))) struct PushServeTests {
    /// One device: a state home and a library folder.
    struct Device {
        let name: String
        let home: URL
        let library: URL

        init(_ name: String, in root: URL) throws {
            self.name = name
            home = root.appendingPathComponent("\(name)-state")
            library = root.appendingPathComponent("\(name)-library")
            try FileManager.default.createDirectory(at: library, withIntermediateDirectories: true)
        }

        /// A device whose state home and library exist already (a fixture).
        init(_ name: String, home: URL, library: URL) {
            (self.name, self.home, self.library) = (name, home, library)
        }

        @discardableResult
        func run(_ arguments: [String], openFileLimit: Int? = nil) async throws -> LFSyncProcess.Output {
            try await LFSyncProcess.run(arguments, home: home, openFileLimit: openFileLimit)
        }

        func deviceID() async throws -> String {
            struct ID: Decodable { var deviceID: String }
            return try await JSONDecoder().decode(ID.self, from: Data(run(["id", "--json"]).stdout.utf8)).deviceID
        }
    }

    /// A running `lfsync serve`, stopped with SIGTERM.
    final class Server {
        let process = Process()
        let log: URL
        private(set) var address = ""

        /// - Parameter library: the folder to serve, when not the device's own library.
        init(_ device: Device, library: URL? = nil, extra: [String] = [], openFileLimit: Int? = nil, umask: String? = nil) async throws {
            log = device.home.appendingPathComponent("serve.log")
            try FileManager.default.createDirectory(at: device.home, withIntermediateDirectories: true)
            FileManager.default.createFile(atPath: log.path, contents: nil)
            (process.executableURL, process.arguments) = LFSyncProcess.command(
                ["serve", (library ?? device.library).path, "--listen", "127.0.0.1:0", "--no-advertise"] + extra,
                openFileLimit: openFileLimit, umask: umask)
            var environment = ProcessInfo.processInfo.environment
            environment["LFSYNC_HOME"] = device.home.path
            process.environment = environment
            process.standardOutput = FileHandle.nullDevice
            process.standardError = try FileHandle(forWritingTo: log)
            process.standardInput = FileHandle.nullDevice
            try await process.run()
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline {
                let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
                if let range = text.range(of: "listening on ") {
                    address = String(text[range.upperBound...].prefix { $0 != " " })
                    return
                }
                guard process.isRunning else { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            process.terminate()
            throw CommandError("serve did not start: \((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
        }

        func stop() -> String {
            if process.isRunning {
                process.terminate()
                process.waitUntilExit()
            }
            return (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        }
    }

    struct CommandError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// laptop and nas, initialised, each trusting the other; the nas accepts the laptop's offers unasked.
    static func pair(_ root: URL, autoAccept: Bool = true) async throws -> (laptop: Device, nas: Device) {
        let laptop = try Device("laptop", in: root), nas = try Device("nas", in: root)
        #expect(try await laptop.run(["init", "--name", "laptop"]).status == 0)
        #expect(try await nas.run(["init", "--name", "nas"]).status == 0)
        #expect(try await nas.run(["trust", laptop.deviceID(), "--name", "laptop"] + (autoAccept ? ["--auto-accept"] : [])).status == 0)
        return (laptop, nas)
    }

    static func tree(_ url: URL) throws -> [String: Data] { try EngineHarness.tree(url) }

    /// One way to name a library: its path, as the argument of every command; the old
    /// `--library DIR` of serve, pull and verify still works, saying it is deprecated.
    @Test func aLibraryIsNamedByItsPathOnEveryCommand() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let (laptop, nas) = try await Self.pair(root)
            #expect(try await nas.run(["trust", laptop.deviceID(), "--name", "laptop", "--auto-accept", "--allow-pull"]).status == 0)
            let server = try await Server(nas)
            defer { _ = server.stop() }
            // `serve PATH` (the harness's form) says nothing of --library.
            #expect(!((try? String(contentsOf: server.log, encoding: .utf8)) ?? "").contains("deprecated"))
            #expect(try await laptop.run(["trust", nas.deviceID(), "--name", "nas", "--address", server.address]).status == 0)
            try EngineHarness.writeSample(at: laptop.library, padding: 20_000)
            #expect(try await laptop.run(["push", laptop.library.path, "--to", "nas"]).status == 0)
            let fresh = root.appendingPathComponent("restored")
            try FileManager.default.createDirectory(at: fresh, withIntermediateDirectories: true)
            let pull = try await laptop.run(["pull", "--from", "nas", fresh.path])
            #expect(pull.status == 0 && !pull.stderr.contains("deprecated"), "\(pull.stderr)")
            let verify = try await laptop.run(["verify", laptop.library.path])
            #expect(verify.status == 0 && !verify.stderr.contains("deprecated"), "\(verify.stderr)")
            let old = try await laptop.run(["verify", "--library", laptop.library.path])
            #expect(old.status == 0 && old.stderr.contains("--library is deprecated"), "\(old.stderr)")
            let both = try await laptop.run(["verify", laptop.library.path, "--library", fresh.path])
            #expect(both.status == 64 && both.stderr.contains("two libraries given"), "\(both.stderr)")
            let none = try await laptop.run(["pull", "--from", "nas"])
            #expect(none.status == 64 && none.stderr.contains("lfsync pull --from PEER PATH"), "\(none.stderr)")
        }
    }

    @Test func pushStatusAndPullEndToEnd() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let (laptop, nas) = try await Self.pair(root)
            let server = try await Server(nas)
            defer { _ = server.stop() }
            #expect(try await laptop.run(["trust", nas.deviceID(), "--name", "nas", "--address", server.address]).status == 0)
            try EngineHarness.writeSample(at: laptop.library, padding: 100_000)

            let push = try await laptop.run(["push", laptop.library.path, "--to", "nas"])
            #expect(push.status == 0, "\(push.stderr)")
            #expect(push.stderr.contains("nas: completed — 12 of 12 assets confirmed"))
            #expect(try Self.tree(nas.library) == Self.tree(laptop.library))

            struct Status: Decodable { var peer: String; var synced: Int; var failed: Int; var pending: Int }
            let mine = try await JSONDecoder().decode([Status].self, from: Data(laptop.run(["status", "--json"]).stdout.utf8))
            #expect(mine.first { $0.peer == "nas" }?.synced == 12)
            let theirs = try await JSONDecoder().decode([Status].self, from: Data(nas.run(["status", "--json"]).stdout.utf8))
            #expect(theirs.first { $0.peer == "laptop" }?.synced == 12)
            let scoped = try await JSONDecoder().decode([Status].self, from: Data(laptop.run(["status", laptop.library.path, "--peer", "nas", "--json"]).stdout.utf8))
            #expect(scoped.first?.synced == 12 && scoped.first?.pending == 0)

            // A repeated push moves nothing, and says so.
            let again = try await laptop.run(["push", laptop.library.path, "--to", "nas"])
            #expect(again.status == 0)
            #expect(again.stderr.contains("0 B sent"))

            // Pull: the laptop serves its library. Accepting the nas's pushes unasked does not let it pull.
            // (The nas's own serve stops first: one receiver per library, see oneReceiverPerLibrary.)
            _ = server.stop()
            #expect(try await laptop.run(["trust", nas.deviceID(), "--name", "nas", "--address", server.address, "--auto-accept"]).status == 0)
            let refusingServer = try await Server(laptop)
            try TestSupport.write(Array("only on the laptop\n".utf8), to: laptop.library.appendingPathComponent("new.txt"))
            #expect(try await nas.run(["trust", laptop.deviceID(), "--name", "laptop", "--address", refusingServer.address, "--auto-accept"]).status == 0)
            let refused = try await nas.run(["pull", "--from", "laptop", nas.library.path])
            #expect(refused.status == 77, "\(refused.stderr)")
            #expect(refused.stderr.contains("refused the pull") && refused.stderr.contains("--allow-pull"), "\(refused.stderr)")
            #expect(try Self.tree(nas.library)["new.txt"] == nil)
            #expect(refusingServer.stop().contains("not allowed to pull"))

            // Allowed to pull (and no longer auto-accepted: the two are independent), the nas gets what it lacks.
            #expect(try await laptop.run(["trust", nas.deviceID(), "--name", "nas", "--allow-pull"]).status == 0)
            let laptopServer = try await Server(laptop)
            defer { _ = laptopServer.stop() }
            #expect(try await nas.run(["trust", laptop.deviceID(), "--name", "laptop", "--address", laptopServer.address, "--auto-accept"]).status == 0)
            let pulled = try await nas.run(["pull", "--from", "laptop", nas.library.path])
            #expect(pulled.status == 0, "\(pulled.stderr)")
            #expect(try Self.tree(nas.library)["new.txt"] == Data("only on the laptop\n".utf8))
        }
    }

    /// `push --dry-run` says what it would offer and sends nothing: the receiver's library
    /// stays empty, its serve sees no connection, and the ledger records no push.
    @Test func aDryRunSendsNothing() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let (laptop, nas) = try await Self.pair(root)
            let server = try await Server(nas)
            #expect(try await laptop.run(["trust", nas.deviceID(), "--name", "nas", "--address", server.address]).status == 0)
            try EngineHarness.writeSample(at: laptop.library, padding: 10_000)
            let dry = try await laptop.run(["push", laptop.library.path, "--to", "nas", "--dry-run"])
            #expect(dry.status == 0, "\(dry.stderr)")
            #expect(dry.stdout.contains("nas: would offer 12 assets") && dry.stdout.contains("12 not yet synced with it"), "\(dry.stdout)")
            #expect(try Self.tree(nas.library).isEmpty)
            struct Status: Decodable { var peer: String; var synced: Int; var failed: Int; var pending: Int }
            let status = try await JSONDecoder().decode([Status].self, from: Data(laptop.run(["status", "--json"]).stdout.utf8))
            #expect(status.allSatisfy { $0.synced == 0 && $0.failed == 0 && $0.pending == 0 }, "\(status)")
            let log = server.stop()
            #expect(!log.contains("connection from"), "serve saw a connection: \(log)")
        }
    }

    /// `lfsync verify`: content that changed while nothing the file system records did —
    /// inode, size, modification and change time: bit rot, made under the file system — is
    /// CORRUPT (exit 1); an edit is "modified" (exit 0), the ordinary kind and the kind that
    /// puts the modification time back alike (its change time moved).
    @Test(.enabled(if: LoopDisk.missing == nil, "true bit rot needs a loop-mounted ext4: \(LoopDisk.missing ?? "")"))
    func verifyTellsCorruptFromModifiedAndExits1OnCorruption() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let disk = try await LoopDisk("laptop", in: root)
            defer { disk.detach() }
            let device = Device("laptop", home: root.appendingPathComponent("laptop-state"), library: disk.mount.appendingPathComponent("Pictures"))
            #expect(try await device.run(["init", "--name", "laptop"]).status == 0)
            let photo = device.library.appendingPathComponent("IMG_0001.JPG"), notes = device.library.appendingPathComponent("notes.txt")
            let retouched = device.library.appendingPathComponent("IMG_0002.JPG")
            try TestSupport.write([UInt8](repeating: 0x41, count: 50_000), to: photo)
            try TestSupport.write([UInt8](repeating: 0x42, count: 50_000), to: retouched)
            try TestSupport.write(Array("first draft\n".utf8), to: notes)
            try await TestSupport.waitForFilesToSettle()
            let first = try await device.run(["verify", device.library.path])
            #expect(first.status == 0)
            #expect(first.stderr.contains("hashes recorded now"), "\(first.stderr)")

            // Bit rot: one bit of the photo flipped on the disk itself.
            try await disk.rot("Pictures/IMG_0001.JPG", at: 1234)
            // An edit that puts the time back (exiftool -P): the change time tells.
            var edited = [UInt8](repeating: 0x42, count: 50_000)
            edited[1234] = 0x43
            try TestSupport.overwriteKeepingMtime(retouched, with: edited)
            // An ordinary edit: new size, new mtime.
            try await Task.sleep(for: .milliseconds(20))
            try TestSupport.write(Array("second draft, longer\n".utf8), to: notes)
            let second = try await device.run(["verify", device.library.path, "--json"])
            #expect(second.status == 1, "corruption is exit 1: \(second.stderr)")
            struct Report: Decodable { var filesChecked: Int; var corrupt: [String]; var modified: [String] }
            let report = try JSONDecoder().decode(Report.self, from: Data(second.stdout.utf8))
            #expect(report.filesChecked == 3)
            #expect(report.corrupt == ["IMG_0001.JPG"])
            #expect(report.modified == ["IMG_0002.JPG", "notes.txt"])
            let text = try await device.run(["verify", device.library.path])
            #expect(text.stdout.contains("CORRUPT   IMG_0001.JPG") && text.stdout.contains("modified  IMG_0002.JPG")
                    && text.stdout.contains("modified  notes.txt"), "\(text.stdout)")
        }
    }

    /// `push --progress json`: one JSON object per line on stderr, with the fields the README
    /// lists, ending with every byte and asset done.
    @Test func progressJSONIsOneObjectPerLine() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let (laptop, nas) = try await Self.pair(root)
            let server = try await Server(nas)
            defer { _ = server.stop() }
            #expect(try await laptop.run(["trust", nas.deviceID(), "--name", "nas", "--address", server.address]).status == 0)
            try EngineHarness.writeSample(at: laptop.library, padding: 200_000)
            let push = try await laptop.run(["push", laptop.library.path, "--to", "nas", "--progress", "json"])
            #expect(push.status == 0, "\(push.stderr)")
            struct Line: Decodable {
                var peer: String; var deviceID: String; var state: String
                var bytesDone: UInt64; var bytesTotal: UInt64; var assetsDone: Int; var assetsTotal: Int
            }
            // Every line is JSON now (notes too, as {"event": "note"}); the progress lines are these.
            let objects = push.stderr.split(separator: "\n").filter { $0.contains(#""event":"progress""#) }
            #expect(!objects.isEmpty, "no JSON progress lines: \(push.stderr)")
            let lines = try objects.map { try JSONDecoder().decode(Line.self, from: Data($0.utf8)) }
            #expect(lines.allSatisfy { $0.peer == "nas" && $0.bytesDone <= $0.bytesTotal && $0.assetsDone <= $0.assetsTotal })
            let last = try #require(lines.last)
            #expect(last.state == "completed" && last.bytesDone == last.bytesTotal && last.assetsDone == last.assetsTotal && last.assetsTotal == 12,
                    "\(last)")
        }
    }

    @Test func oneReceiverPerLibrary() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let (laptop, nas) = try await Self.pair(root)
            let laptopServer = try await Server(laptop)
            defer { _ = laptopServer.stop() }
            #expect(try await nas.run(["trust", laptop.deviceID(), "--name", "laptop", "--address", laptopServer.address]).status == 0)
            let server = try await Server(nas)
            // A second serve, or a pull, into the library serve receives into: exit 75 at once, nothing started
            // (were the lock ignored, the second serve would run until the time limit: exit 124).
            let second = try await LFSyncProcess.run(["serve", nas.library.path, "--listen", "127.0.0.1:0", "--no-advertise"],
                                                     home: nas.home, timeLimit: 30)
            #expect(second.status == 75, "\(second.stderr)")
            #expect(second.stderr.contains("another lfsync process is receiving into this library"), "\(second.stderr)")
            #expect(second.stderr.contains(nas.library.path + "/.lfsync/lock"), "\(second.stderr)")
            let pull = try await nas.run(["pull", "--from", "laptop", nas.library.path])
            #expect(pull.status == 75, "\(pull.stderr)")
            #expect(!pull.stderr.contains("refused"), "pull went ahead: \(pull.stderr)")
            // Another library is not affected, and the lock goes with the process that held it.
            let other = root.appendingPathComponent("other-library")
            try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
            let elsewhere = try await nas.run(["pull", "--from", "laptop", other.path])
            #expect(elsewhere.status == 77, "\(elsewhere.stderr)")
            _ = server.stop()
            let again = try await Server(nas)
            _ = again.stop()
        }
    }

    @Test func batchIsQuietOnSuccessAndHonoursTheLock() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let (laptop, nas) = try await Self.pair(root)
            let server = try await Server(nas)
            defer { _ = server.stop() }
            #expect(try await laptop.run(["trust", nas.deviceID(), "--name", "nas", "--address", server.address]).status == 0)
            try TestSupport.write(Array("cron was here\n".utf8), to: laptop.library.appendingPathComponent("a.txt"))
            let quiet = try await laptop.run(["push", laptop.library.path, "--all", "--batch"])
            #expect(quiet.status == 0)
            #expect(quiet.stdout.isEmpty && quiet.stderr.isEmpty, "batch success must print nothing: \(quiet.stderr)")

            // Another run holding the lock: the second exits 75 at once.
            let lock = open(laptop.home.appendingPathComponent("lock").path, O_RDWR | O_CREAT, 0o600)
            defer { close(lock) }
            #expect(flock(lock, LOCK_EX | LOCK_NB) == 0)
            let blocked = try await laptop.run(["push", laptop.library.path, "--all", "--batch"])
            #expect(blocked.status == 75)
            #expect(blocked.stderr.contains("another lfsync run"))
        }
    }

    @Test func declinedUnreachableAndUntrustedExitCodes() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            // The nas trusts the laptop to connect but not to push unasked, and has no terminal: declined.
            let (laptop, nas) = try await Self.pair(root, autoAccept: false)
            let server = try await Server(nas)
            #expect(try await laptop.run(["trust", nas.deviceID(), "--name", "nas", "--address", server.address]).status == 0)
            try TestSupport.write(Array("x".utf8), to: laptop.library.appendingPathComponent("x.txt"))
            let declined = try await laptop.run(["push", laptop.library.path, "--to", "nas", "--batch"])
            #expect(declined.status == 77, "\(declined.stderr)")
            #expect(declined.stderr.contains("declined"))
            #expect(try Self.tree(nas.library).isEmpty)
            let log = server.stop()
            #expect(log.contains("declined"))

            // Nobody listens there any more: unreachable. The engine counts and records it like
            // any other failure to deliver: the asset failed with nas, and says why.
            let unreachable = try await laptop.run(["push", laptop.library.path, "--to", "nas", "--batch", "--json"])
            #expect(unreachable.status == 69)
            struct Report: Decodable { struct Peer: Decodable { var state: String; var assetsFailed: Int }; var assets: Int; var peers: [Peer] }
            let report = try JSONDecoder().decode(Report.self, from: Data(unreachable.stdout.utf8))
            #expect(report.assets == 1 && report.peers.map(\.assetsFailed) == [1], "\(unreachable.stdout)")
            #expect(report.peers.first?.state.hasPrefix("unreachable: ") == true, "\(unreachable.stdout)")
            struct Status: Decodable { var peer: String; var failed: Int; var failures: [String: String]? }
            let status = try await JSONDecoder().decode([Status].self, from: Data(laptop.run(["status", "--json"]).stdout.utf8))
            let nasStatus = try #require(status.first { $0.peer == "nas" })
            #expect(nasStatus.failed == 1)
            #expect(nasStatus.failures?.values.allSatisfy { $0.hasPrefix("not connected: ") } == true, "\(String(describing: nasStatus.failures))")

            // HOST:PORT of a device we never trusted: refused in batch mode, nothing sent.
            let stranger = try Device("stranger", in: root)
            #expect(try await stranger.run(["init"]).status == 0)
            #expect(try await stranger.run(["trust", laptop.deviceID(), "--name", "laptop", "--auto-accept"]).status == 0)
            let strangerServer = try await Server(stranger)
            defer { _ = strangerServer.stop() }
            let untrusted = try await laptop.run(["push", laptop.library.path, "--to", strangerServer.address, "--batch"])
            #expect(untrusted.status == 77)
            #expect(untrusted.stderr.contains("not trusted"))
            #expect(try Self.tree(stranger.library).isEmpty)
        }
    }

    @Test func usageMistakesExit64() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let device = try Device("d", in: root)
            #expect(try await device.run(["init"]).status == 0)
            for arguments in [["push", root.path], ["trust", "NOT-A-DEVICE-ID"], ["push", root.path, "--to", "nobody"], ["serve"],
                              ["push", root.path, "--to", "x", "--progress", "loud"]] {
                let output = try await device.run(arguments)
                #expect(output.status == 64, "\(arguments): \(output.stderr)")
                #expect(!output.stderr.isEmpty)
            }
            // A typed option's value is checked by the parser, before the command does anything,
            // and the message names the option and what it expects.
            for (arguments, option) in [(["peers", "--timeout", "0"], "--timeout"), (["peers", "--timeout=soon"], "--timeout"),
                                        (["push", root.path, "--to", "x", "--progress", "loud"], "--progress")] {
                let output = try await device.run(arguments)
                #expect(output.status == 64, "\(arguments): \(output.stderr)")
                #expect(output.stderr.contains("not a valid value for '\(option)'"), "\(output.stderr)")
            }
            // A mistyped Device ID is caught by its check characters.
            let id = try await device.deviceID()
            var typo = Array(id)
            typo[3] = typo[3] == "A" ? "B" : "A"
            let rejected = try await device.run(["trust", String(typo)])
            #expect(rejected.status == 64)
            #expect(rejected.stderr.contains("typo") || rejected.stderr.contains("check"))
        }
    }
}
