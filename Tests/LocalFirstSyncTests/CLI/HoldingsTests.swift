import Foundation
import Testing
@testable import LFSyncFixtures
@testable import LocalFirstSync
@testable import LFSyncSystem

/// `whereis`, `offload` and the holding check end to end, with real `lfsync` processes on
/// loopback: a laptop whose library went to a nas and a desktop. The safety case of
/// `offload` — what must never count as a copy — is one test per way it could go wrong.
@Suite(.timeLimit(.minutes(4))) struct HoldingsTests {
    typealias Device = PushServeTests.Device
    typealias Server = PushServeTests.Server

    struct Household {
        let laptop: Device, nas: Device, desktop: Device
        var nasServer: Server, desktopServer: Server
        let original: [String: Data]

        func stop() {
            _ = nasServer.stop()
            _ = desktopServer.stop()
        }
    }

    /// laptop, nas and desktop; the laptop's real-shaped library (a Live Photo, RAW+JPEG with
    /// sidecars, duplicates) pushed to `pushTo`; both serve, trusting the laptop to push and pull.
    /// - Parameter laptopLibrary: where the laptop's library lives (a loop-mounted disk, say).
    static func household(_ root: URL, pushTo: [String] = ["nas", "desktop"], laptopLibrary: URL? = nil) async throws -> Household {
        let laptop = try laptopLibrary.map { library in
            try FileManager.default.createDirectory(at: library, withIntermediateDirectories: true)
            return Device("laptop", home: root.appendingPathComponent("laptop-state"), library: library)
        } ?? Device("laptop", in: root)
        let nas = try Device("nas", in: root), desktop = try Device("desktop", in: root)
        for device in [laptop, nas, desktop] { #expect(try await device.run(["init", "--name", device.name]).status == 0) }
        let laptopID = try await laptop.deviceID()
        for device in [nas, desktop] {
            #expect(try await device.run(["trust", laptopID, "--name", "laptop", "--auto-accept", "--allow-pull"]).status == 0)
        }
        let nasServer = try await Server(nas), desktopServer = try await Server(desktop)
        #expect(try await laptop.run(["trust", nas.deviceID(), "--name", "nas", "--address", nasServer.address]).status == 0)
        #expect(try await laptop.run(["trust", desktop.deviceID(), "--name", "desktop", "--address", desktopServer.address]).status == 0)
        try EngineHarness.writeSample(at: laptop.library, padding: 60_000)
        // Old enough that the scan trusts its cache (a file left alone for a few seconds).
        #expect(try await LFSyncProcess.shell("find '\(laptop.library.path)' -type f -exec touch -d '2 hours ago' {} +") == 0)
        for peer in pushTo {
            let push = try await laptop.run(["push", laptop.library.path, "--to", peer])
            #expect(push.status == 0, "\(push.stderr)")
        }
        return Household(laptop: laptop, nas: nas, desktop: desktop, nasServer: nasServer, desktopServer: desktopServer,
                         original: try EngineHarness.tree(laptop.library))
    }

    struct Place: Decodable {
        struct DeviceState: Decodable { var peer: String; var state: String }
        var path: String
        var files: [String]
        var here: String
        var holders: [String]?
        var devices: [DeviceState]
    }

    struct OffloadReport: Decodable {
        struct Removal: Decodable { var path: String; var files: [String]; var holders: [String] }
        struct Kept: Decodable { var path: String; var reason: String }
        var devicesChecked: [String]
        var removed: [Removal]
        var kept: [Kept]
        var bytesFreed: UInt64
        var dryRun: Bool
    }

    static func whereis(_ device: Device, _ arguments: [String] = []) async throws -> [Place] {
        let output = try await device.run(["whereis", device.library.path, "--json"] + arguments)
        #expect(output.status == 0, "\(output.stderr)")
        return try JSONDecoder().decode([Place].self, from: Data(output.stdout.utf8))
    }

    static func offload(_ device: Device, _ arguments: [String]) async throws -> (status: Int32, report: OffloadReport?, stderr: String) {
        let output = try await device.run(["offload", device.library.path, "--json"] + arguments)
        let report = try? JSONDecoder().decode([OffloadReport].self, from: Data(output.stdout.utf8)).first
        return (output.status, report, output.stderr)
    }

    /// Files of the laptop's library (the `.lfsync` folder aside).
    static func files(_ device: Device) throws -> [String: Data] {
        try EngineHarness.tree(device.library).filter { !$0.key.hasPrefix(".lfsync") }
    }

    @Test func whereisShowsEveryDeviceAndWhatOneLacks() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let home = try await Self.household(root, pushTo: ["nas"])
            defer { home.stop() }
            let places = try await Self.whereis(home.laptop)
            #expect(places.count == 12, "\(places.map(\.path))")
            for place in places {
                #expect(place.here == "here")
                #expect(place.devices.first { $0.peer == "nas" }?.state == "synced", "\(place.path)")
                #expect(place.devices.first { $0.peer == "desktop" }?.state == "pending", "\(place.path)")
            }
            #expect(try await Self.whereis(home.laptop, ["--missing-on", "desktop"]).count == 12)
            #expect(try await Self.whereis(home.laptop, ["--missing-on", "nas"]).isEmpty)
            // A photo, or a folder, of the library: answered from the library's index.
            func placesAt(_ relative: String) async throws -> [Place] {
                let output = try await home.laptop.run(["whereis", home.laptop.library.appendingPathComponent(relative).path, "--json"])
                #expect(output.status == 0, "\(output.stderr)")
                return try JSONDecoder().decode([Place].self, from: Data(output.stdout.utf8))
            }
            #expect(try await placesAt("DCIM/100APPLE/IMG_0001.HEIC").map(\.files) == [["DCIM/100APPLE/IMG_0001.HEIC", "DCIM/100APPLE/IMG_0001.MOV"]])
            #expect(try await placesAt("Camera").map(\.path).sorted() == ["Camera/DSC_0100.JPG", "Camera/DSC_0101.JPG"])
            let text = try await home.laptop.run(["whereis", home.laptop.library.path])
            #expect(text.stdout.contains("nas: synced") && text.stdout.contains("desktop: pending"), "\(text.stdout)")
        }
    }

    @Test func offloadListsThenRemovesWhatTwoDevicesProveTheyHoldAndPullBringsItBack() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let home = try await Self.household(root)
            defer { home.stop() }
            let nasBefore = try EngineHarness.tree(home.nas.library)

            // Without --yes: a list, and nothing deleted.
            let dry = try await Self.offload(home.laptop, ["--copies", "2"])
            #expect(dry.status == 0, "\(dry.stderr)")
            #expect(dry.report?.dryRun == true)
            #expect(dry.report?.removed.count == 12 && dry.report?.kept.isEmpty == true, "\(String(describing: dry.report?.kept))")
            #expect(Set(dry.report?.devicesChecked ?? []) == ["nas", "desktop"])
            #expect(try Self.files(home.laptop) == home.original)

            let done = try await Self.offload(home.laptop, ["--copies", "2", "--yes"])
            #expect(done.status == 0, "\(done.stderr)")
            #expect(done.report?.removed.count == 12)
            let left = try Self.files(home.laptop)
            #expect(left.isEmpty, "\(left.keys.sorted())")
            // Whole assets went: every file of the original library is recorded, with both holders.
            let places = try await Self.whereis(home.laptop)
            #expect(Set(places.flatMap(\.files)) == Set(home.original.keys))
            #expect(places.allSatisfy { $0.here == "offloaded" && Set($0.holders ?? []) == ["nas", "desktop"] })
            let status = try await home.laptop.run(["status", home.laptop.library.path])
            #expect(status.stdout.contains("offloaded here: \(home.original.count) files"), "\(status.stdout)")
            // The same library reached through a symlink is the same library.
            let link = root.appendingPathComponent("pictures-link")
            try FileManager.default.createSymbolicLink(at: link, withDestinationURL: home.laptop.library)
            let linked = try await home.laptop.run(["status", link.path])
            #expect(linked.stdout.contains("offloaded here: \(home.original.count) files"), "\(linked.stdout)")
            // Nothing changed on the other devices.
            #expect(try EngineHarness.tree(home.nas.library) == nasBefore)

            // A pull brings every file back, byte for byte, and the records go.
            let pull = try await home.laptop.run(["pull", "--from", "nas", home.laptop.library.path])
            #expect(pull.status == 0, "\(pull.stderr)")
            #expect(try Self.files(home.laptop) == home.original)
            #expect(try await Self.whereis(home.laptop).allSatisfy { $0.here == "here" })
            #expect(!(try await home.laptop.run(["status", home.laptop.library.path]).stdout.contains("offloaded here")))
        }
    }

    /// As git-annex drops a file or a folder: PATH may be a folder or a file of a library
    /// lfsync indexed, answered as part of that one library (its index, its records), whole
    /// assets at a time; a path in no library is refused, not indexed as a new one.
    @Test func offloadTakesAFolderOrAFileOfALibrary() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let home = try await Self.household(root)
            defer { home.stop() }
            let library = home.laptop.library
            let indexes = { try FileManager.default.contentsOfDirectory(atPath: home.laptop.home.appendingPathComponent("libraries").path).filter { $0.hasSuffix(".sqlite") } }
            let indexesBefore = try indexes()
            let folder = try await home.laptop.run(["offload", library.appendingPathComponent("Camera").path, "--copies", "2", "--yes", "--json"])
            #expect(folder.status == 0, "\(folder.stderr)")
            let fromFolder = try JSONDecoder().decode([OffloadReport].self, from: Data(folder.stdout.utf8)).first
            #expect(fromFolder?.removed.flatMap(\.files).sorted() == home.original.keys.filter { $0.hasPrefix("Camera/") }.sorted())
            // One file of a Live Photo: the asset goes whole, its video too.
            let still = try await home.laptop.run(["offload", library.appendingPathComponent("DCIM/100APPLE/IMG_0001.HEIC").path, "--copies", "2", "--yes", "--json"])
            #expect(still.status == 0, "\(still.stderr)")
            #expect(try JSONDecoder().decode([OffloadReport].self, from: Data(still.stdout.utf8)).first?.removed.flatMap(\.files).sorted()
                    == ["DCIM/100APPLE/IMG_0001.HEIC", "DCIM/100APPLE/IMG_0001.MOV"])
            let left = try Self.files(home.laptop)
            #expect(left.keys.sorted() == home.original.keys.filter { !$0.hasPrefix("Camera/") && !$0.hasPrefix("DCIM/100APPLE/IMG_0001.") }.sorted())
            #expect(try indexes() == indexesBefore, "a folder was indexed as a library of its own")
            #expect(!FileManager.default.fileExists(atPath: library.appendingPathComponent("Camera/.lfsync").path))
            let whereis = try await Self.whereis(home.laptop)
            #expect(whereis.filter { $0.here == "offloaded" }.count == 3)
            // Outside every library: refused, nothing indexed.
            let outside = root.appendingPathComponent("elsewhere")
            try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
            let refused = try await home.laptop.run(["offload", outside.path, "--copies", "1"])
            #expect(refused.status == 64 && refused.stderr.contains("not in a library lfsync knows"), "\(refused.stderr)")
            #expect(try indexes() == indexesBefore)
            // One pull of the library brings them all back.
            let pull = try await home.laptop.run(["pull", "--from", "nas", library.path])
            #expect(pull.status == 0, "\(pull.stderr)")
            #expect(try Self.files(home.laptop) == home.original)
        }
    }

    /// A holder answers from its library as it is when it answers (PROTOCOL.md, "Holding
    /// checks"): a photo copied into the nas's library by hand after it was asked is held at
    /// the next check — `serve` watches its library — not "not held" for as long as an
    /// earlier look at the library is reused.
    @Test func aPhotoCopiedIntoTheHoldersLibraryByHandIsHeldAtTheNextCheck() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let home = try await Self.household(root, pushTo: ["nas"])
            defer { home.stop() }
            let photo = "Camera/DSC_0200.JPG"
            var generator = SplitMix64(seed: 200)
            let bytes = generator.bytes(40_000)
            try TestSupport.write(bytes, to: home.laptop.library.appendingPathComponent(photo))
            #expect(try await LFSyncProcess.shell("touch -d '2 hours ago' '\(home.laptop.library.appendingPathComponent(photo).path)'") == 0)
            let before = try await Self.offload(home.laptop, ["--copies", "1", "--peers", "nas"])
            #expect(before.report?.kept.map(\.path) == [photo], "\(String(describing: before.report?.kept))")
            // Copied in by hand on the nas (a card reader, a file manager).
            try TestSupport.write(bytes, to: home.nas.library.appendingPathComponent(photo))
            try await Task.sleep(for: .milliseconds(500))
            let after = try await Self.offload(home.laptop, ["--copies", "1", "--peers", "nas"])
            #expect(after.report?.kept.isEmpty == true, "\(String(describing: after.report?.kept))")
            #expect(after.report?.removed.map(\.path).contains(photo) == true)
        }
    }

    @Test func aCopyDamagedOnTheHoldersDiskDoesNotCount() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let home = try await Self.household(root)
            defer { home.stop() }
            // Bit rot on the desktop: one byte flipped, size and modification time kept.
            let victim = "DCIM/100APPLE/IMG_0001.HEIC"
            #expect(FileManager.default.fileExists(atPath: home.desktop.library.appendingPathComponent(victim).path))
            try Self.rot(victim, in: home.desktop)

            // One verified copy would be enough for --copies 1, but a device reporting it changed keeps it.
            let one = try await Self.offload(home.laptop, ["--copies", "1"])
            #expect(one.report?.kept.map(\.path) == [victim], "\(String(describing: one.report?.kept))")
            let done = try await Self.offload(home.laptop, ["--copies", "2", "--yes"])
            #expect(done.status == 0, "\(done.stderr)")
            let kept = done.report?.kept ?? []
            #expect(kept.map(\.path).contains(victim), "\(kept)")
            #expect(kept.first { $0.path == victim }?.reason.contains("desktop: held but changed") == true, "\(kept)")
            #expect(try Self.files(home.laptop)[victim] == home.original[victim])
            #expect(done.report?.removed.count == 11)
        }
    }

    /// Bit rot as a disk does it: a byte of the file's block changed under the file system,
    /// its size, times and inode untouched, so the holder's scan still trusts its cached
    /// hashes. Only the proof, which reads the bytes, can tell; the asset stays.
    @Test(.enabled(if: LoopDisk.missing == nil, "true bit rot needs a loop-mounted ext4: \(LoopDisk.missing ?? "")"))
    func bitRotUnderTheHoldersFileSystemIsCaughtByTheProof() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let disk = try await LoopDisk("desktop", in: root)
            defer { disk.detach() }
            let laptop = try Device("laptop", in: root)
            let desktop = Device("desktop", home: root.appendingPathComponent("desktop-state"), library: disk.mount.appendingPathComponent("Pictures"))
            try FileManager.default.createDirectory(at: desktop.library, withIntermediateDirectories: true)
            #expect(try await laptop.run(["init", "--name", "laptop"]).status == 0)
            #expect(try await desktop.run(["init", "--name", "desktop"]).status == 0)
            #expect(try await desktop.run(["trust", laptop.deviceID(), "--name", "laptop", "--auto-accept"]).status == 0)
            var server = try await Server(desktop)
            #expect(try await laptop.run(["trust", desktop.deviceID(), "--name", "desktop", "--address", server.address]).status == 0)
            try EngineHarness.writeSample(at: laptop.library, padding: 60_000)
            #expect(try await LFSyncProcess.shell("find '\(laptop.library.path)' -type f -exec touch -d '2 hours ago' {} +") == 0)
            #expect(try await laptop.run(["push", laptop.library.path, "--to", "desktop"]).status == 0)
            let victim = "DCIM/100APPLE/IMG_0004.HEIC"

            // The desktop stops; one byte of the victim's first block changes on the disk itself.
            _ = server.stop()
            try await disk.rot("Pictures/\(victim)", at: 2000)
            server = try await Server(desktop)
            defer { _ = server.stop() }
            #expect(try await laptop.run(["trust", desktop.deviceID(), "--name", "desktop", "--address", server.address]).status == 0)

            // Without proof the desktop's word (its trusted cache) would count; with it, the victim stays.
            let trusting = try await Self.offload(laptop, ["--copies", "1", "--no-proof"])
            #expect(trusting.report?.removed.map(\.path).contains(victim) == true, "the cache still vouches for it without proof")
            let done = try await Self.offload(laptop, ["--copies", "1", "--yes"])
            #expect(done.status == 0, "\(done.stderr)")
            #expect(done.report?.kept.map(\.path) == [victim], "\(String(describing: done.report?.kept))")
            #expect(done.report?.kept.first?.reason.contains("desktop: held but changed") == true)
            #expect(FileManager.default.fileExists(atPath: laptop.library.appendingPathComponent(victim).path))
            #expect(done.report?.removed.count == 11)
        }
    }

    @Test func fewerThanNDevicesAnsweringMeansNothingGoes() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            var home = try await Self.household(root)
            defer { home.stop() }
            _ = home.desktopServer.stop()
            let done = try await Self.offload(home.laptop, ["--copies", "2", "--yes"])
            #expect(done.status == 69, "\(done.stderr)")
            #expect(done.report?.removed.isEmpty == true && done.report?.devicesChecked == ["nas"])
            #expect(try Self.files(home.laptop) == home.original)
            // More copies than trusted devices: refused before anyone is asked.
            let impossible = try await home.laptop.run(["offload", home.laptop.library.path, "--copies", "3", "--yes"])
            #expect(impossible.status == 64, "\(impossible.stderr)")
            home.desktopServer = try await Server(home.desktop)
        }
    }

    @Test func oneDeviceNamedTwiceCountsOnce() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let home = try await Self.household(root)
            defer { home.stop() }
            let nasID = try await home.nas.deviceID()
            let done = try await Self.offload(home.laptop, ["--copies", "2", "--yes", "--peers", "nas,\(nasID)"])
            #expect(done.status == 69, "\(done.stderr)")
            #expect(done.report?.devicesChecked == ["nas"])
            #expect(done.report?.removed.isEmpty == true)
            #expect(try Self.files(home.laptop) == home.original)
        }
    }

    /// A device that answers "held" for what it does not hold — with a made-up proof, with
    /// none, by never answering, by hanging up — is not a copy.
    @Test(arguments: ["claim", "no-proof", "silent", "hang-up"])
    func aDeviceThatDoesNotProveItsCopyIsNotCounted(mode: String) async throws {
        let hostile = LabProcess.binary("lfsync-hostile-peer", environment: "LFSYNC_HOSTILE_PEER")
        try await TestSupport.withTemporaryDirectory { root in
            let home = try await Self.household(root, pushTo: ["nas"])
            defer { home.stop() }
            let key = root.appendingPathComponent("liar.key").path
            let process = Process()
            process.executableURL = hostile
            process.arguments = ["false-holder", "--key", key, "--listen", "127.0.0.1:0", "--mode", mode]
            let out = Pipe()
            process.standardOutput = out
            try process.run()
            defer { process.terminate() }
            let first = try await Self.firstLine(of: out.fileHandleForReading)
            let address = try #require(first.split(separator: "\t").last.map(String.init), "\(first)")
            let liarID = try await Self.hostileID(hostile, key: key)
            #expect(try await home.laptop.run(["trust", liarID, "--name", "liar", "--address", address]).status == 0)

            let done = try await Self.offload(home.laptop, ["--copies", "2", "--yes", "--timeout", "3", "--peers", "nas,liar"])
            #expect(try Self.files(home.laptop) == home.original, "\(done.stderr)")
            #expect(done.report?.removed.isEmpty == true)
            if mode == "silent" || mode == "hang-up" {
                #expect(done.status == 69, "\(done.stderr)")
                #expect(done.report?.devicesChecked == ["nas"])
            } else {
                #expect(done.status == 0, "\(done.stderr)")
                #expect(done.report?.kept.allSatisfy { $0.reason.contains("liar: claimed, but its proof does not match") } == true,
                        "\(String(describing: done.report?.kept.first))")
            }
        }
    }

    struct VerifyReport: Decodable {
        struct Repaired: Decodable { var path: String; var chunks: Int; var bytes: UInt64; var from: String; var damagedCopy: String }
        struct Unrepaired: Decodable { var path: String; var reason: String }
        var corrupt: [String]
        var modified: [String]
        var repaired: [Repaired]?
        var unrepaired: [Unrepaired]?
        var damagedCopies: [String]
    }

    /// Flips one byte of `path` in `device`'s library, keeping its size and modification time:
    /// an in-place edit (its change time moves), which a holder's proof tells from the bytes
    /// it recorded. For bit rot, which moves nothing, see `LoopDisk`.
    static func rot(_ path: String, in device: Device, at offset: Int? = nil) throws {
        let url = device.library.appendingPathComponent(path)
        var status = stat()
        #expect(stat(url.path, &status) == 0)
        var bytes = try Data(contentsOf: url)
        bytes[offset ?? bytes.count / 2] ^= 0x01
        try bytes.write(to: url)
        // The time to the nanosecond, as bit rot leaves it (a Date would round it).
        var times = [timespec(tv_sec: 0, tv_nsec: (1 << 30) - 2), status.st_mtim]  // UTIME_OMIT, then the old mtime
        #expect(utimensat(AT_FDCWD, url.path, &times, 0) == 0)
    }

    /// The laptop's copy rots under its file system; the nas's copy of the same photo was
    /// edited. Nothing is repaired from a copy that is not the recorded one.
    @Test(.enabled(if: LoopDisk.missing == nil, "true bit rot needs a loop-mounted ext4: \(LoopDisk.missing ?? "")"))
    func repairFromADeviceWhoseCopyIsDamagedToo() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let disk = try await LoopDisk("laptop", in: root)
            defer { disk.detach() }
            let home = try await Self.household(root, pushTo: ["nas"], laptopLibrary: disk.mount.appendingPathComponent("Pictures"))
            defer { home.stop() }
            let still = "DCIM/100APPLE/IMG_0003.HEIC"
            try await TestSupport.waitForFilesToSettle()
            #expect(try await home.laptop.run(["scan", home.laptop.library.path]).status == 0)
            try await disk.rot("Pictures/\(still)", at: UInt64(home.original[still]?.count ?? 0) / 2)
            try Self.rot(still, in: home.nas)
            let output = try await home.laptop.run(["verify", home.laptop.library.path, "--repair", "--from", "nas", "--json"])
            #expect(output.status == 1, "\(output.stderr)")
            let report = try JSONDecoder().decode(VerifyReport.self, from: Data(output.stdout.utf8))
            #expect(report.corrupt == [still])
            #expect(report.repaired?.isEmpty == true)
            #expect(report.unrepaired?.first?.path == still)
            #expect(report.unrepaired?.first?.reason.contains("nas") == true, "\(String(describing: report.unrepaired))")
            // Left as it was: damaged, not replaced by anything else.
            #expect(try Self.files(home.laptop)[still] != home.original[still])
            #expect(try Self.files(home.laptop)[still]?.count == home.original[still]?.count)
        }
    }

    /// kill -9 at any moment of an offload leaves every file present, or recorded as
    /// offloaded with its holders.
    @Test func killedOffloadLeavesEveryFilePresentOrRecorded() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let home = try await Self.household(root)
            defer { home.stop() }
            // More assets, so that a kill lands in the middle of removing them.
            let extra = home.laptop.library.appendingPathComponent("Bulk")
            try FileManager.default.createDirectory(at: extra, withIntermediateDirectories: true)
            for index in 0..<300 { try TestSupport.write(Array("bulk file \(index)\n".utf8), to: extra.appendingPathComponent("note-\(index).txt")) }
            #expect(try await LFSyncProcess.shell("find '\(extra.path)' -type f -exec touch -d '2 hours ago' {} +") == 0)
            for peer in ["nas", "desktop"] { #expect(try await home.laptop.run(["push", home.laptop.library.path, "--to", peer]).status == 0) }
            let everything = try Self.files(home.laptop)
            // Each time, killed once the files start going: after the first, the 20th, the 100th removal.
            var killedMidway = 0
            for removals in [1, 20, 100] {
                let total = try Self.files(home.laptop).count
                let process = Process()
                process.executableURL = LFSyncProcess.binary
                process.arguments = ["offload", home.laptop.library.path, "--copies", "2", "--yes"]
                process.environment = ProcessInfo.processInfo.environment.merging(["LFSYNC_HOME": home.laptop.home.path]) { _, new in new }
                (process.standardOutput, process.standardError) = (FileHandle.nullDevice, FileHandle.nullDevice)
                try process.run()
                if await Self.kill(process, onceFilesAreAtMost: total - removals, in: home.laptop) { killedMidway += 1 }
                let present = Set(try Self.files(home.laptop).keys)
                let recorded = try await Self.whereis(home.laptop).filter { $0.here == "offloaded" }
                for place in recorded { #expect(Set(place.holders ?? []) == ["nas", "desktop"], "\(place.path)") }
                let accounted = present.union(recorded.flatMap(\.files))
                let lost = Set(everything.keys).subtracting(accounted)
                #expect(lost.isEmpty, "killed after \(removals) removals: \(lost.count) files neither here nor recorded, e.g. \(lost.sorted().prefix(3))")
                // What is still here is intact.
                for (path, data) in try Self.files(home.laptop) { #expect(everything[path] == data, "\(path)") }
                if present.isEmpty { break }
            }
            #expect(killedMidway > 0, "no offload was killed while removing files: the test did not test anything")
            // And a pull brings the rest back.
            let pull = try await home.laptop.run(["pull", "--from", "desktop", home.laptop.library.path])
            #expect(pull.status == 0, "\(pull.stderr)")
            #expect(try Self.files(home.laptop) == everything)
        }
    }

    /// Waits for `process`, sending it SIGKILL as soon as `device`'s library holds at most
    /// `count` files; true if it was killed (rather than ending first).
    static func kill(_ process: Process, onceFilesAreAtMost count: Int, in device: Device) async -> Bool {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                while process.isRunning {
                    if Self.fileCount(device) <= count {
                        Glibc.kill(process.processIdentifier, SIGKILL)
                        process.waitUntilExit()
                        continuation.resume(returning: true)
                        return
                    }
                }
                continuation.resume(returning: false)
            }
        }
    }

    /// Regular files in the library outside `.lfsync`, counted without reading them.
    static func fileCount(_ device: Device) -> Int {
        guard let walker = FileManager.default.enumerator(atPath: device.library.path) else { return 0 }
        var count = 0
        while let path = walker.nextObject() as? String {
            if path == ".lfsync" { walker.skipDescendants(); continue }
            if walker.fileAttributes?[.type] as? FileAttributeType == .typeRegular { count += 1 }
        }
        return count
    }

    static func hostileID(_ binary: URL, key: String) async throws -> String {
        let process = Process()
        process.executableURL = binary
        process.arguments = ["id", "--key", key]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let line = try await firstLine(of: out.fileHandleForReading)
        process.waitUntilExit()
        return line
    }

    /// The first line a child prints, read off the cooperative pool.
    static func firstLine(of handle: FileHandle) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                var line = Data()
                while true {
                    let byte = handle.readData(ofLength: 1)
                    if byte.isEmpty || byte == Data("\n".utf8) { break }
                    line.append(byte)
                }
                continuation.resume(returning: String(decoding: line, as: UTF8.self))
            }
        }
    }
}
