import Foundation
import Testing
@testable import LFSyncFixtures
@testable import LocalFirstSync
@testable import LFSyncSystem

/// Sync, not only copy (issue 44), with real `lfsync` processes on loopback: an edit updates
/// the other device's file (the old one kept in its versions area) instead of making a
/// conflict copy; a rename moves no bytes; a deletion travels only when asked, and what it
/// removes is kept and can be restored; only concurrent edits make a conflict copy, named
/// the same on every device; a library that looks unmounted propagates no deletion; and a
/// household of three devices running `serve` and `watch` converges, forwarding through the
/// device that is on. Each failed on the lfsync before path versions (a second conflict
/// copy per edit, the old path left behind, no deletion ever travelling).
@Suite(.timeLimit(.minutes(5))) struct SyncTests {
    typealias Device = PushServeTests.Device
    typealias Server = PushServeTests.Server

    /// The laptop's sample library pushed to the nas, which serves it and accepts the laptop's pushes.
    struct Pair {
        let laptop: Device, nas: Device
        let server: Server

        func push(_ extra: [String] = []) async throws -> LFSyncProcess.Output {
            try await laptop.run(["push", laptop.library.path, "--to", "nas"] + extra)
        }

        func nasFiles() throws -> [String: Data] { try EngineHarness.tree(nas.library) }
        func laptopFiles() throws -> [String: Data] { try EngineHarness.tree(laptop.library) }
    }

    static func pair(_ root: URL, nasExtra: [String] = []) async throws -> Pair {
        let (laptop, nas) = try await PushServeTests.pair(root)
        let server = try await Server(nas, extra: nasExtra)
        #expect(try await laptop.run(["trust", nas.deviceID(), "--name", "nas", "--address", server.address]).status == 0)
        try EngineHarness.writeSample(at: laptop.library, padding: 60_000)
        let pair = Pair(laptop: laptop, nas: nas, server: server)
        let first = try await pair.push()
        #expect(first.status == 0, "\(first.stderr)")
        #expect(try pair.nasFiles() == pair.laptopFiles())
        return pair
    }

    static func write(_ text: String, to url: URL) throws {
        try Data(text.utf8).write(to: url)
    }

    static func conflictCopies(_ files: [String: Data]) -> [String] {
        files.keys.filter { $0.contains("(conflict ") }.sorted()
    }

    struct Kept: Decodable {
        var path: String
        var reason: String
        var by: String
        var bytes: UInt64
    }

    @Test func anEditUpdatesThePeersFileAndKeepsTheOldOne() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let pair = try await Self.pair(root)
            defer { _ = pair.server.stop() }
            let sidecar = "Camera/DSC_0100.NEF.xmp"
            let url = pair.laptop.library.appendingPathComponent(sidecar)
            let original = try Data(contentsOf: url)
            for rating in 1...3 {
                try Self.write("<x:xmpmeta><rating>\(rating)</rating></x:xmpmeta>\n", to: url)
                let push = try await pair.push()
                #expect(push.status == 0, "\(push.stderr)")
                #expect(push.stderr.contains("synced: 1 updated"), "\(push.stderr)")
            }
            let nas = try pair.nasFiles()
            // The edit replaced the file; no conflict copy, ever, for edits one after another.
            #expect(nas == (try pair.laptopFiles()))
            #expect(Self.conflictCopies(nas).isEmpty)
            // Every replaced version is kept, newest first, and said by whom.
            let listed = try await pair.nas.run(["versions", pair.nas.library.appendingPathComponent(sidecar).path, "--json"])
            #expect(listed.status == 0, "\(listed.stderr)")
            let kept = try JSONDecoder().decode([Kept].self, from: Data(listed.stdout.utf8))
            #expect(kept.count == 3)
            #expect(kept.allSatisfy { $0.reason == "replaced" && $0.by == "laptop" && $0.path == sidecar })
            // The first version can be had back.
            let restore = try await pair.nas.run(["restore", pair.nas.library.appendingPathComponent(sidecar).path, "--at", "2000-01-01"])
            #expect(restore.status != 0)  // nothing kept that early
            _ = original
        }
    }

    /// `verify` re-reads the kept versions too: one whose bytes rotted is named and fails the
    /// run (exit 1), one removed by hand is named as missing; the others are counted.
    @Test func verifyChecksTheKeptVersions() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let pair = try await Self.pair(root)
            defer { _ = pair.server.stop() }
            let url = pair.laptop.library.appendingPathComponent("Documents/notes.txt")
            for round in 1...3 {
                try Self.write("notes, round \(round)\n", to: url)
                let push = try await pair.push()
                #expect(push.status == 0, "\(push.stderr)")
            }
            let clean = try await pair.nas.run(["verify", pair.nas.library.path])
            #expect(clean.status == 0, "\(clean.stderr)")
            #expect(clean.stderr.contains("3 kept versions checked"), "\(clean.stderr)")
            let area = pair.nas.library.appendingPathComponent(".lfsync/versions")
            let kept = try FileManager.default.subpathsOfDirectory(atPath: area.path).filter { $0.hasSuffix("notes.txt") }.sorted()
            try #require(kept.count == 3, "\(kept)")
            // Rot in one (same size), another gone.
            let rotted = area.appendingPathComponent(kept[0])
            var bytes = try Data(contentsOf: rotted)
            bytes[0] ^= 0x20
            try bytes.write(to: rotted)
            try FileManager.default.removeItem(at: area.appendingPathComponent(kept[1]))
            let found = try await pair.nas.run(["verify", pair.nas.library.path])
            #expect(found.status == 1, "\(found.stderr)")
            #expect(found.stdout.contains("DAMAGED VERSION .lfsync/versions/\(kept[0])"), "\(found.stdout)")
            #expect(found.stdout.contains("MISSING VERSION .lfsync/versions/\(kept[1])"), "\(found.stdout)")
        }
    }

    @Test func aRenameMovesNoBytesAndADeletionTravelsOnlyWhenAsked() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let pair = try await Self.pair(root)
            defer { _ = pair.server.stop() }
            let fm = FileManager.default
            let video = "Videos/birthday.mp4", renamed = "Videos/2024-06 birthday.mp4", notes = "Documents/notes.txt"
            try fm.moveItem(at: pair.laptop.library.appendingPathComponent(video), to: pair.laptop.library.appendingPathComponent(renamed))
            try fm.removeItem(at: pair.laptop.library.appendingPathComponent(notes))

            // Without --delete: the new name arrives (no bytes: the nas has them), the old name stays.
            let copy = try await pair.push()
            #expect(copy.status == 0, "\(copy.stderr)")
            #expect(copy.stderr.contains("0 B sent"), "\(copy.stderr)")
            var nas = try pair.nasFiles()
            #expect(nas[renamed] != nil && nas[video] != nil && nas[notes] != nil)
            #expect(copy.stderr.contains("not applied"), "\(copy.stderr)")

            // With --delete: the old names go, into the nas's versions area, and nothing else moves.
            let mirror = try await pair.push(["--delete"])
            #expect(mirror.status == 0, "\(mirror.stderr)")
            #expect(mirror.stderr.contains("2 deleted"), "\(mirror.stderr)")
            #expect(!mirror.stderr.contains("of changed chunks"), "\(mirror.stderr)")
            nas = try pair.nasFiles()
            #expect(nas == (try pair.laptopFiles()))
            let listed = try await pair.nas.run(["versions", pair.nas.library.path, "--json"])
            let kept = try JSONDecoder().decode([Kept].self, from: Data(listed.stdout.utf8))
            #expect(Set(kept.map(\.path)) == [video, notes])
            #expect(kept.allSatisfy { $0.reason == "deleted" })
            // whereis knows them: deleted here, kept in the versions area.
            struct Place: Decodable { var path: String; var here: String; var keptVersions: Int }
            let whereis = try await pair.nas.run(["whereis", pair.nas.library.appendingPathComponent("Documents").path, "--json"])
            #expect(whereis.status == 0, "\(whereis.stderr)")
            let places = try JSONDecoder().decode([Place].self, from: Data(whereis.stdout.utf8))
            #expect(places.first { $0.path == notes }.map { $0.here == "deleted" && $0.keptVersions == 1 } == true, "\(whereis.stdout)")

            // And a deleted file comes back with restore, then travels as a new version.
            let restore = try await pair.nas.run(["restore", pair.nas.library.appendingPathComponent(notes).path])
            #expect(restore.status == 0, "\(restore.stderr)")
            #expect(try pair.nasFiles()[notes] == Data("Buy film. Back up the NAS.\n".utf8))
        }
    }

    @Test func maxDeleteAndAnUnmountedLibraryStopDeletions() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let pair = try await Self.pair(root)
            defer { _ = pair.server.stop() }
            let before = try pair.nasFiles()
            for path in ["Documents/notes.txt", "Documents/recipes.pdf", "Videos/birthday.mp4"] {
                try FileManager.default.removeItem(at: pair.laptop.library.appendingPathComponent(path))
            }
            let capped = try await pair.push(["--delete", "--max-delete", "2"])
            #expect(capped.status == 1, "\(capped.stderr)")
            #expect(capped.stderr.contains("over the limit of 2"), "\(capped.stderr)")
            #expect(try pair.nasFiles() == before)

            // The laptop's disk "unmounted": its folder is empty, its marker gone.
            let library = pair.laptop.library
            for item in try FileManager.default.contentsOfDirectory(atPath: library.path) {
                try FileManager.default.removeItem(at: library.appendingPathComponent(item))
            }
            let unmounted = try await pair.push(["--delete"])
            #expect(unmounted.stderr.contains("looks unmounted or emptied"), "\(unmounted.stderr)")
            var expected = before
            for path in ["Documents/notes.txt", "Documents/recipes.pdf", "Videos/birthday.mp4"] { expected[path] = nil }
            // Only the three deleted while it was mounted may go (the cap lifted now); nothing else.
            let nas = try pair.nasFiles()
            #expect(nas.count >= expected.count)
            for (path, data) in expected { #expect(nas[path] == data, "\(path)") }
        }
    }

    /// The laptop and the nas both edit one sidecar before they sync: both versions are
    /// kept, the later edit at the path and the other beside it under one conflict name —
    /// the same name, with the same bytes, on both devices once they have synced both ways.
    @Test func concurrentEditsMakeOneConflictCopyTheSameOnBothDevices() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let pair = try await Self.pair(root)
            defer { _ = pair.server.stop() }
            // The laptop serves too, and takes the nas's syncs.
            #expect(try await pair.laptop.run(["trust", pair.nas.deviceID(), "--name", "nas", "--address", pair.server.address, "--auto-accept"]).status == 0)
            let laptopServer = try await Server(pair.laptop)
            defer { _ = laptopServer.stop() }
            #expect(try await pair.nas.run(["trust", pair.laptop.deviceID(), "--name", "laptop", "--address", laptopServer.address, "--auto-accept"]).status == 0)

            let sidecar = "Camera/DSC_0100.NEF.xmp"
            try Self.write("rated on the nas\n", to: pair.nas.library.appendingPathComponent(sidecar))
            try await Task.sleep(for: .milliseconds(20))
            try Self.write("rated on the laptop, later\n", to: pair.laptop.library.appendingPathComponent(sidecar))
            // The nas records its own edit first (its own push to the laptop does).
            let nasPush = try await pair.nas.run(["push", pair.nas.library.path, "--to", "laptop"])
            #expect(nasPush.status == 0, "\(nasPush.stderr)")
            let laptopPush = try await pair.push()
            #expect(laptopPush.status == 0, "\(laptopPush.stderr)")
            let again = try await pair.nas.run(["push", pair.nas.library.path, "--to", "laptop"])
            #expect(again.status == 0, "\(again.stderr)")

            let laptop = try pair.laptopFiles(), nas = try pair.nasFiles()
            #expect(laptop == nas)
            let copies = Self.conflictCopies(nas)
            #expect(copies.count == 1, "\(copies)")
            #expect(nas[sidecar] == Data("rated on the laptop, later\n".utf8))
            #expect(copies.first.flatMap { nas[$0] } == Data("rated on the nas\n".utf8))
        }
    }
}

/// A household of three devices, each running one `lfsync sync --all --delete`, converges:
/// what the laptop changes reaches the desktop that was off meanwhile, through the nas; what
/// the desktop then changes reaches both others.
@Suite(.timeLimit(.minutes(5))) struct HouseholdSyncTests {
    typealias Device = PushServeTests.Device

    /// A running `lfsync sync`, stopped with SIGTERM.
    final class Service {
        let process = Process()
        let log: URL
        private(set) var address = ""

        init(_ device: Device) async throws {
            log = device.home.appendingPathComponent("sync.log")
            FileManager.default.createFile(atPath: log.path, contents: nil)
            (process.executableURL, process.arguments) = LFSyncProcess.command(
                ["sync", device.library.path, "--all", "--delete", "--listen", "127.0.0.1:0", "--no-advertise", "--settle", "0.3"], openFileLimit: nil)
            var environment = ProcessInfo.processInfo.environment
            environment["LFSYNC_HOME"] = device.home.path
            process.environment = environment
            process.standardOutput = FileHandle.nullDevice
            process.standardError = try FileHandle(forWritingTo: log)
            process.standardInput = FileHandle.nullDevice
            try process.run()
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
            throw PushServeTests.CommandError("sync did not start: \((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
        }

        @discardableResult
        func stop() -> String {
            if process.isRunning {
                process.terminate()
                process.waitUntilExit()
            }
            return (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        }
    }

    /// Waits until every library holds `expected` (lfsync's own folder aside), at most `seconds`.
    static func converge(_ devices: [Device], to expected: [String: Data], seconds: Double = 120) async throws -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try devices.allSatisfy({ try EngineHarness.tree($0.library) == expected }) { return true }
            try await Task.sleep(for: .milliseconds(250))
        }
        return false
    }

    static func differences(_ devices: [Device], _ expected: [String: Data]) -> String {
        devices.map { device in
            let tree = (try? EngineHarness.tree(device.library)) ?? [:]
            let missing = Set(expected.keys).subtracting(tree.keys).sorted()
            let extra = Set(tree.keys).subtracting(expected.keys).sorted()
            let different = expected.keys.filter { tree[$0] != nil && tree[$0] != expected[$0] }.sorted()
            return "\(device.name): missing \(missing), extra \(extra), different \(different)"
        }.joined(separator: "; ")
    }

    @Test func threeDevicesConvergeThroughWhicheverIsOn() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let devices = try ["laptop", "nas", "desktop"].map { try Device($0, in: root) }
            let (laptop, nas, desktop) = (devices[0], devices[1], devices[2])
            for device in devices { #expect(try await device.run(["init", "--name", device.name]).status == 0) }
            var ids: [String: String] = [:]
            for device in devices { ids[device.name] = try await device.deviceID() }
            for device in devices {
                for other in devices where other.name != device.name {
                    #expect(try await device.run(["trust", ids[other.name]!, "--name", other.name, "--auto-accept"]).status == 0)
                }
            }
            try EngineHarness.writeSample(at: laptop.library, padding: 30_000)
            #expect(try await LFSyncProcess.shell("find '\(laptop.library.path)' -type f -exec touch -d '2 hours ago' {} +") == 0)
            // Where each runs, told to the others once it listens (trust changes apply at once).
            func introduce(_ service: Service, as device: Device) async throws {
                for other in devices where other.name != device.name {
                    #expect(try await other.run(["trust", ids[device.name]!, "--name", device.name, "--address", service.address, "--auto-accept"]).status == 0)
                }
            }
            let laptopService = try await Service(laptop)
            defer { laptopService.stop() }
            try await introduce(laptopService, as: laptop)
            let nasService = try await Service(nas)
            defer { nasService.stop() }
            try await introduce(nasService, as: nas)

            var expected = try EngineHarness.tree(laptop.library)
            #expect(try await Self.converge([laptop, nas], to: expected), "\(Self.differences([laptop, nas], expected))\n\(nasService.stop())")

            // The desktop is off while the laptop edits, renames and deletes.
            let fm = FileManager.default
            try Data("<x:xmpmeta><rating>4</rating></x:xmpmeta>\n".utf8).write(to: laptop.library.appendingPathComponent("Camera/DSC_0100.NEF.xmp"))
            try fm.moveItem(at: laptop.library.appendingPathComponent("Videos/birthday.mp4"), to: laptop.library.appendingPathComponent("Videos/birthday 2024.mp4"))
            try fm.removeItem(at: laptop.library.appendingPathComponent("Documents/notes.txt"))
            expected = try EngineHarness.tree(laptop.library)
            #expect(try await Self.converge([laptop, nas], to: expected), "\(Self.differences([laptop, nas], expected))")

            // It comes back with an empty library, and gets all of it through the nas (or the laptop).
            let desktopService = try await Service(desktop)
            defer { desktopService.stop() }
            try await introduce(desktopService, as: desktop)
            #expect(try await Self.converge(devices, to: expected), "\(Self.differences(devices, expected))")

            // What it changes reaches both others.
            try Data("Buy film. Back up the NAS. Call the printer.\n".utf8).write(to: desktop.library.appendingPathComponent("Documents/todo.txt"))
            try Data("<x:xmpmeta><rating>5</rating></x:xmpmeta>\n".utf8).write(to: desktop.library.appendingPathComponent("Camera/DSC_0100.NEF.xmp"))
            expected = try EngineHarness.tree(desktop.library)
            #expect(try await Self.converge(devices, to: expected),
                    "\(Self.differences(devices, expected))\ndesktop:\n\(desktopService.stop())\nnas:\n\(nasService.stop())\nlaptop:\n\(laptopService.stop())")
            #expect(!expected.keys.contains { $0.contains("(conflict ") })
        }
    }
}
