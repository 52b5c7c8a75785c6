import Foundation
import Testing
@testable import LocalFirstSync
@testable import LFSyncCrypto

/// Upgrading loses nothing: two devices' state homes and libraries as the lfsync before the
/// change of content hashes left them (`Fixtures/unkeyed-hashes.tar.gz`, made by
/// `scripts/make-upgrade-fixture.sh` at 301f158: laptop pushed 16 assets to nas, and to
/// desktop, which was unreachable), used by today's `lfsync` processes.
@Suite(.timeLimit(.minutes(3))) struct UpgradeTests {
    typealias Device = PushServeTests.Device

    static let fixture = TestSupport.packageRoot.appendingPathComponent("Tests/LocalFirstSyncTests/Fixtures/unkeyed-hashes.tar.gz")
    static let assets = 16

    /// Unpacks the fixture into `root` and puts each library's index where `StateHome` looks
    /// for it now that the library stands at another path (its name is a hash of the path).
    static func unpack(into root: URL) async throws -> (laptop: Device, nas: Device) {
        #expect(try await LFSyncProcess.shell("tar -xzf '\(fixture.path)' -C '\(root.path)'") == 0)
        var devices: [Device] = []
        for name in ["laptop", "nas"] {
            let device = Device(name, home: root.appendingPathComponent("\(name)/state"), library: root.appendingPathComponent("\(name)/Pictures"))
            let libraries = device.home.appendingPathComponent("libraries")
            let real = device.library.resolvingSymlinksInPath().standardizedFileURL.path
            let key = String(Blake2b.hash(Array(real.utf8)).hex.prefix(16))  // as StateHome.libraryIndex(for:) names it
            let old = try #require(try FileManager.default.contentsOfDirectory(atPath: libraries.path).first { $0.hasSuffix(".sqlite") })
            for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: libraries.appendingPathComponent(old + suffix).path) {
                try FileManager.default.moveItem(at: libraries.appendingPathComponent(old + suffix),
                                                 to: libraries.appendingPathComponent("\(key).sqlite\(suffix)"))
            }
            devices.append(device)
        }
        return (devices[0], devices[1])
    }

    struct Status: Decodable { var peer: String; var synced: Int; var pending: Int; var failed: Int }

    static func status(_ device: Device, _ arguments: [String] = []) async throws -> (statuses: [String: Status], stderr: String) {
        let output = try await device.run(["status"] + arguments + ["--json"])
        #expect(output.status == 0, "\(output.stderr)")
        let list = try JSONDecoder().decode([Status].self, from: Data(output.stdout.utf8))
        return (Dictionary(uniqueKeysWithValues: list.map { ($0.peer, $0) }), output.stderr)
    }

    @Test func aLibrarySyncedBeforeTheHashChangeStaysSyncedAndARepeatPushMovesNothing() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let (laptop, nas) = try await Self.unpack(into: root)

            // The ledger's rows are the same facts whatever their names: counted as they were.
            let before = try await Self.status(laptop)
            #expect(before.statuses["nas"]?.synced == Self.assets && before.statuses["desktop"]?.failed == Self.assets)

            // The first use of the library carries it over, once, and says so.
            let first = try await Self.status(laptop, [laptop.library.path])
            #expect(first.stderr.contains("indexing it again with the new content hashes (once)"), "\(first.stderr)")
            #expect(first.stderr.contains("\(2 * Self.assets) ledger rows carried over"), "\(first.stderr)")
            #expect(first.statuses["nas"].map { [$0.synced, $0.pending] } == [Self.assets, 0])
            #expect(first.statuses["desktop"].map { [$0.failed, $0.pending] } == [Self.assets, 0])
            let second = try await Self.status(laptop, [laptop.library.path])
            #expect(!second.stderr.contains("new content hashes"), "not twice: \(second.stderr)")
            #expect(second.statuses["nas"]?.synced == Self.assets)

            // The receiving side: its rows about what the laptop sent are carried over too.
            let received = try await Self.status(nas, [nas.library.path])
            #expect(received.stderr.contains("carried over"), "\(received.stderr)")
            #expect(received.statuses["laptop"].map { [$0.synced, $0.pending] } == [Self.assets, 0])

            // Both sides upgraded: a repeat push confirms everything and sends no chunk.
            let server = try await PushServeTests.Server(nas)
            defer { _ = server.stop() }
            #expect(try await laptop.run(["trust", nas.deviceID(), "--name", "nas", "--address", server.address]).status == 0)
            let push = try await laptop.run(["push", laptop.library.path, "--to", "nas", "--json"])
            #expect(push.status == 0, "\(push.stderr)")
            struct Report: Decodable { struct Peer: Decodable { var assetsStored: Int; var chunkBytesSent: UInt64 }; var peers: [Peer] }
            let report = try JSONDecoder().decode(Report.self, from: Data(push.stdout.utf8))
            #expect(report.peers.first.map { [$0.assetsStored, Int($0.chunkBytesSent)] } == [Self.assets, 0])
            #expect(!server.stop().contains("error"))
            #expect(try PushServeTests.tree(nas.library) == PushServeTests.tree(laptop.library))
        }
    }

    /// What the old index knew is not thrown away unread: a file whose bytes changed while its
    /// size and mtime did not (bit rot) is found by comparing it with the old hash, reported
    /// by `verify` (exit 1), and its ledger row — about the bytes that were sent — is not
    /// carried over to the damaged content.
    @Test func aFileDamagedBeforeTheUpgradeIsReportedAndNotCountedSynced() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let (laptop, _) = try await Self.unpack(into: root)
            let notes = laptop.library.appendingPathComponent("Documents/notes.txt")
            var bytes = try [UInt8](Data(contentsOf: notes))
            bytes[3] ^= 0x20
            try TestSupport.overwriteKeepingMtime(notes, with: bytes)

            let verify = try await laptop.run(["verify", laptop.library.path, "--json"])
            #expect(verify.status == 1, "\(verify.stderr)")
            struct Verify: Decodable { var corrupt: [String] }
            #expect(try JSONDecoder().decode(Verify.self, from: Data(verify.stdout.utf8)).corrupt == ["Documents/notes.txt"])
            #expect(verify.stderr.contains("Documents/notes.txt: its bytes are not those the earlier lfsync recorded"), "\(verify.stderr)")

            let status = try await Self.status(laptop, ["--peer", "nas", laptop.library.path])
            #expect(status.statuses["nas"].map { [$0.synced, $0.pending] } == [Self.assets - 1, 1])
        }
    }
}
