import Foundation
import Testing
@testable import LFSyncFixtures
@testable import LocalFirstSync
@testable import LFSyncSystem

/// What deletes or rewrites a person's files acts only on what was proven, at the moment
/// of the act (`CheckedFile`), with real `lfsync` processes on loopback: an edit between
/// the proof and the unlink, an in-place edit beside true bit rot, a config that lists the
/// device itself, offloaded files brought back at their own paths, records kept until the
/// file is back, a pull cut off when its permission goes. Each of these failed on the code
/// before its fix (the commit that added it says how it was run).
@Suite(.timeLimit(.minutes(4))) struct ActOnWhatWasProvenTests {
    typealias Device = PushServeTests.Device
    typealias Server = PushServeTests.Server
    typealias Report = HoldingsTests.OffloadReport

    static func decode<T: Decodable>(_ type: T.Type, _ output: LFSyncProcess.Output) -> T? {
        try? JSONDecoder().decode(type, from: Data(output.stdout.utf8))
    }

    /// A trusted device that never answers, started for `home` and trusted by its laptop as "liar".
    static func silentDevice(_ root: URL, for home: HoldingsTests.Household) async throws -> Process {
        let hostile = LabProcess.binary("lfsync-hostile-peer", environment: "LFSYNC_HOSTILE_PEER")
        let key = root.appendingPathComponent("liar.key").path
        let process = Process()
        process.executableURL = hostile
        process.arguments = ["false-holder", "--key", key, "--listen", "127.0.0.1:0", "--mode", "silent"]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let first = try await HoldingsTests.firstLine(of: out.fileHandleForReading)
        let address = try #require(first.split(separator: "\t").last.map(String.init), "\(first)")
        let liarID = try await HoldingsTests.hostileID(hostile, key: key)
        #expect(try await home.laptop.run(["trust", liarID, "--name", "liar", "--address", address]).status == 0)
        return process
    }

    /// The review's critical finding: nas proves its copy, then — while offload waits for a
    /// device that does not answer — a photo is edited in place with its modification time
    /// put back. It must stay, with its edited bytes.
    @Test func offloadKeepsAPhotoEditedBetweenItsProofAndItsRemoval() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let home = try await HoldingsTests.household(root, pushTo: ["nas"])
            defer { home.stop() }
            let liar = try await Self.silentDevice(root, for: home)
            defer { liar.terminate() }
            let victim = "DCIM/100APPLE/IMG_0002.HEIC"
            let url = home.laptop.library.appendingPathComponent(victim)
            var edited = [UInt8](try Data(contentsOf: url))
            edited[edited.count / 2] ^= 0x01
            let editedBytes = edited
            let output = try await LFSyncProcess.run(
                ["offload", home.laptop.library.path, "--json", "--copies", "1", "--yes", "--timeout", "6", "--peers", "nas,liar"],
                home: home.laptop.home
            ) { line in
                // nas has answered (with proof) by the time the liar is asked.
                if line.hasPrefix("asking liar") { try? TestSupport.overwriteKeepingMtime(url, with: editedBytes) }
            }
            #expect(output.status == 0, "\(output.stderr)")
            let report = try #require(Self.decode([Report].self, output)?.first, "\(output.stdout) \(output.stderr)")
            #expect(report.devicesChecked == ["nas"])
            #expect(report.kept.map(\.path) == [victim], "\(report.kept)")
            #expect(report.kept.first?.reason.contains("changed since it was checked") == true, "\(report.kept)")
            #expect(report.removed.count == 11)
            #expect(try Data(contentsOf: url) == Data(editedBytes), "the edited photo was deleted or changed")
        }
    }

    /// An in-place edit with its modification time put back is an edit (its change time
    /// moved), never bit rot: `verify` says modified and `--repair` leaves the edit alone.
    @Test func anInPlaceEditWithItsTimePutBackIsNeverRepaired() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let home = try await HoldingsTests.household(root)
            defer { home.stop() }
            let still = "DCIM/100APPLE/IMG_0002.HEIC"
            let url = home.laptop.library.appendingPathComponent(still)
            var edited = [UInt8](try Data(contentsOf: url))
            edited[edited.count / 2] ^= 0x01
            try TestSupport.overwriteKeepingMtime(url, with: edited)
            let output = try await home.laptop.run(["verify", home.laptop.library.path, "--repair", "--json"])
            #expect(output.status == 0, "\(output.stderr)")
            let report = try #require(Self.decode(HoldingsTests.VerifyReport.self, output), "\(output.stdout) \(output.stderr)")
            #expect(report.corrupt.isEmpty, "an edit was called corrupt: \(report.corrupt)")
            #expect(report.modified == [still])
            #expect(report.repaired?.isEmpty ?? true)
            #expect(try Data(contentsOf: url) == Data(edited), "the edit was reverted")
            #expect(!FileManager.default.fileExists(atPath: home.laptop.library.appendingPathComponent(".lfsync/damaged").path))
        }
    }

    /// Bit rot as a disk makes it (bytes changed under the file system: inode, size and
    /// every time unchanged) is repaired; an in-place edit beside it, time put back, is not.
    @Test(.enabled(if: LoopDisk.missing == nil, "true bit rot needs a loop-mounted ext4: \(LoopDisk.missing ?? "")"))
    func repairHealsBitRotMadeUnderTheFileSystemAndNotAnEditBesideIt() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let disk = try await LoopDisk("laptop", in: root)
            defer { disk.detach() }
            let home = try await HoldingsTests.household(root, laptopLibrary: disk.mount.appendingPathComponent("Pictures"))
            defer { home.stop() }
            let library = home.laptop.library
            // A 6 MB video, many chunks; one byte of it rots, and one of a still.
            let video = "Videos/birthday.mp4", still = "DCIM/100APPLE/IMG_0002.HEIC", notes = "Documents/notes.txt"
            let big = (0..<6_000_000).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }
            try TestSupport.write(big, to: library.appendingPathComponent(video))
            #expect(try await LFSyncProcess.shell("touch -d '2 hours ago' '\(library.appendingPathComponent(video).path)'") == 0)
            for peer in ["nas", "desktop"] { #expect(try await home.laptop.run(["push", library.path, "--to", peer]).status == 0) }
            // Recorded with their change times: left alone a while before a scan hashed them.
            try await TestSupport.waitForFilesToSettle()
            #expect(try await home.laptop.run(["scan", library.path]).status == 0)
            let healthy = try HoldingsTests.files(home.laptop)
            try await disk.rot("Pictures/\(video)", at: 3_000_000)
            try await disk.rot("Pictures/\(still)", at: UInt64(healthy[still]?.count ?? 0) / 2)
            // The edit beside it: same size, modification time put back.
            let edited = Array("Buy film. Back up the NAS!\n".utf8)
            try TestSupport.overwriteKeepingMtime(library.appendingPathComponent(notes), with: edited)

            let output = try await home.laptop.run(["verify", library.path, "--repair", "--json"])
            #expect(output.status == 0, "\(output.stderr)")
            let report = try #require(Self.decode(HoldingsTests.VerifyReport.self, output), "\(output.stdout) \(output.stderr)")
            #expect(Set(report.corrupt) == [video, still], "\(report.corrupt)")
            #expect(report.modified == [notes])
            let healed = Dictionary(uniqueKeysWithValues: (report.repaired ?? []).map { ($0.path, $0) })
            #expect(healed[video]?.chunks == 1, "\(report)")
            #expect((healed[video]?.bytes ?? .max) < 3_000_000, "only the bad chunk travels, not the 6 MB file")
            #expect(report.unrepaired?.isEmpty == true, "\(String(describing: report.unrepaired))")
            let after = try HoldingsTests.files(home.laptop)
            #expect(after[video] == healthy[video] && after[still] == healthy[still])
            #expect(after[notes] == Data(edited), "the edit was reverted")
            // The damaged bytes are kept, listed, and go only when the user says so.
            let kept = try #require(healed[video]?.damagedCopy)
            let damaged = try Data(contentsOf: library.appendingPathComponent(kept))
            #expect(damaged != healthy[video] && damaged.count == healthy[video]?.count)
            #expect(report.damagedCopies.count == 2)
            let again = try await home.laptop.run(["verify", library.path])
            #expect(again.status == 0 && again.stderr.contains("2 damaged copies kept"), "\(again.stderr)")
            #expect(try await home.laptop.run(["verify", library.path, "--clear-damaged"]).status == 0)
            #expect(!FileManager.default.fileExists(atPath: library.appendingPathComponent(".lfsync/damaged").path))
        }
    }

    /// A config.json that lists this device's own ID (copied from another machine) is
    /// refused by every command that reads or dials its devices, with what to do; `untrust`
    /// still removes the entry.
    @Test func aConfigThatListsThisDeviceItselfIsRefused() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let home = try await HoldingsTests.household(root, pushTo: ["nas"])
            defer { home.stop() }
            let laptopID = try await home.laptop.deviceID()
            let configURL = home.laptop.home.appendingPathComponent("config.json")
            var config = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: configURL)) as? [String: Any])
            var peers = config["peers"] as? [[String: Any]] ?? []
            peers.append(["name": "old-laptop", "deviceID": laptopID, "address": home.nasServer.address, "autoAccept": true, "allowPull": true])
            config["peers"] = peers
            try JSONSerialization.data(withJSONObject: config).write(to: configURL)

            for arguments in [["offload", home.laptop.library.path, "--copies", "1"], ["pull", "--from", "nas", home.laptop.library.path],
                              ["push", home.laptop.library.path, "--to", "nas"], ["status"]] {
                let output = try await home.laptop.run(arguments)
                #expect(output.status == 65, "\(arguments[0]): \(output.status) \(output.stderr)")
                #expect(output.stderr.contains("lists this device's own ID") && output.stderr.contains("lfsync untrust old-laptop"),
                        "\(arguments[0]): \(output.stderr)")
            }
            #expect(try HoldingsTests.files(home.laptop) == home.original)
            let untrust = try await home.laptop.run(["untrust", "old-laptop"])
            #expect(untrust.status == 0, "\(untrust.stderr)")
            #expect(try await home.laptop.run(["offload", home.laptop.library.path, "--copies", "1"]).status == 0)
            // Named directly, it is not a peer either.
            let own = try await home.laptop.run(["push", home.laptop.library.path, "--to", laptopID])
            #expect(own.status == 64 && own.stderr.contains("is this device itself"), "\(own.stderr)")
        }
    }

    /// Offloaded files come back each at its own path, whatever path the holder keeps the
    /// content at: a copy made after the push (the holder has the content only at the first
    /// path), and a file the holder stored under a conflict name.
    @Test func pullBringsBackEveryOffloadedPathWhateverPathTheHolderKeepsItAt() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let home = try await HoldingsTests.household(root, pushTo: [])
            defer { home.stop() }
            let library = home.laptop.library
            // The nas already has notes of its own at the laptop's path: the laptop's go beside them.
            try TestSupport.write(Array("The nas's own list.\n".utf8), to: home.nas.library.appendingPathComponent("Documents/notes.txt"))
            // Saved a while ago (a file written that very second is left for the next sync), and
            // after the laptop's: the nas's list keeps the path, the laptop's goes beside it.
            #expect(try await LFSyncProcess.shell("touch -d '1 hour ago' '\(home.nas.library.appendingPathComponent("Documents/notes.txt").path)'") == 0)
            let push = try await home.laptop.run(["push", library.path, "--to", "nas"])
            #expect(push.status == 0, "\(push.stderr)")
            let nasFiles = try EngineHarness.tree(home.nas.library).keys
            #expect(nasFiles.contains { $0.hasPrefix("Documents/notes (conflict ") }, "\(nasFiles.sorted())")
            // Its own list goes later: the nas holds the laptop's notes only under the conflict name.
            try FileManager.default.removeItem(at: home.nas.library.appendingPathComponent("Documents/notes.txt"))
            // A copy made after the push: the nas holds its content, at the first path only.
            try FileManager.default.createDirectory(at: library.appendingPathComponent("Copies"), withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: library.appendingPathComponent("Documents/recipes.pdf"), to: library.appendingPathComponent("Copies/recipes.pdf"))
            #expect(try await LFSyncProcess.shell("touch -d '2 hours ago' '\(library.appendingPathComponent("Copies/recipes.pdf").path)'") == 0)
            let before = try HoldingsTests.files(home.laptop)

            let offload = try await home.laptop.run(["offload", library.path, "--copies", "1", "--peers", "nas", "--yes", "--json"])
            #expect(offload.status == 0, "\(offload.stderr)")
            let removed = Set(Self.decode([Report].self, offload)?.first?.removed.flatMap(\.files) ?? [])
            #expect(removed.contains("Copies/recipes.pdf") && removed.contains("Documents/notes.txt"), "\(removed.sorted())")

            let pull = try await home.laptop.run(["pull", "--from", "nas", library.path])
            #expect(pull.status == 0, "\(pull.stderr)")
            let after = try HoldingsTests.files(home.laptop)
            #expect(after == before, "missing: \(Set(before.keys).subtracting(after.keys).sorted()), extra: \(Set(after.keys).subtracting(before.keys).sorted())")
            let status = try await home.laptop.run(["status", library.path])
            #expect(!status.stdout.contains("offloaded here"), "\(status.stdout)")
        }
    }

    /// A record goes only when its path holds its file again (by hash): another file of the
    /// same size at the path is not it, and is never replaced.
    @Test func anOffloadRecordStaysUntilItsPathHoldsItsFileAgain() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let home = try await HoldingsTests.household(root, pushTo: ["nas"])
            defer { home.stop() }
            let library = home.laptop.library
            let offload = try await home.laptop.run(["offload", library.path, "--copies", "1", "--peers", "nas", "--yes"])
            #expect(offload.status == 0, "\(offload.stderr)")
            let path = "Documents/recipes.pdf"
            let url = library.appendingPathComponent(path)
            let original = try #require(home.original[path])
            let stranger = Data(repeating: 0x5a, count: original.count)
            try stranger.write(to: url)

            let pull = try await home.laptop.run(["pull", "--from", "nas", library.path])
            #expect(pull.status == 1, "\(pull.stderr)")
            #expect(pull.stderr.contains("not back: \(path)"), "\(pull.stderr)")
            #expect(try Data(contentsOf: url) == stranger, "a file of the same size was replaced")
            let status = try await home.laptop.run(["status", library.path])
            #expect(status.stdout.contains("offloaded here: 1 file"), "\(status.stdout)")
            // Moved out of the way, the file comes back and its record goes.
            try FileManager.default.moveItem(at: url, to: root.appendingPathComponent("stranger.pdf"))
            let again = try await home.laptop.run(["pull", "--from", "nas", library.path])
            #expect(again.status == 0, "\(again.stderr)")
            #expect(try Data(contentsOf: url) == original)
            #expect(!(try await home.laptop.run(["status", library.path]).stdout.contains("offloaded here")))
        }
    }

    /// `trust` without --allow-pull on the serving side, while a pull is being answered:
    /// the pull stops getting files within moments, and serve says why.
    @Test func revokingThePermissionToPullStopsAPullBeingAnswered() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let home = try await HoldingsTests.household(root, pushTo: [])
            defer { home.stop() }
            // 40 photos of 1 MB on the nas; the laptop receives at most 2 MB/s: 20 s in all.
            let bulk = home.nas.library.appendingPathComponent("Bulk")
            for index in 0..<40 {
                var generator = SplitMix64(seed: UInt64(index) + 1)
                try TestSupport.write(generator.bytes(1_000_000), to: bulk.appendingPathComponent(String(format: "IMG_%04d.JPG", index)))
            }
            let laptopID = try await home.laptop.deviceID()
            let received = { (try? FileManager.default.contentsOfDirectory(atPath: home.laptop.library.appendingPathComponent("Bulk").path).count) ?? 0 }
            let laptop = home.laptop
            let pull = Task { try await laptop.run(["pull", "--from", "nas", laptop.library.path, "--bwlimit", "2M"]) }
            let deadline = Date().addingTimeInterval(60)
            while received() == 0, Date() < deadline { try await Task.sleep(for: .milliseconds(100)) }
            #expect(received() > 0, "the pull never started")
            #expect(try await home.nas.run(["trust", laptopID, "--name", "laptop", "--auto-accept"]).status == 0)
            let revoked = Date()
            let output = try await pull.value
            let took = Date().timeIntervalSince(revoked)
            #expect(took < 10, "the pull went on for \(took) s after the permission went")
            #expect(received() < 40, "every photo still arrived after the permission went")
            #expect(output.status != 0, "\(output.stderr)")
            let log = home.nasServer.stop()
            #expect(log.contains("may no longer pull"), "\(log)")
        }
    }
}
