import Foundation
import Testing
@testable import LocalFirstSync
import LFSyncSystem
import LFSyncCrypto
import LFSyncContent
import LFSyncStore
import LFSyncTransport
import LFSyncTCP
import LFSyncDiscovery
import LFSyncWire

/// A row in flight belongs to the push that wrote it: kill -9 the pushing process and
/// `status` no longer says anything is in flight — what was on its way reads
/// "interrupted" until the next push, which sends it.
@Suite(.timeLimit(.minutes(3))) struct InterruptedPushTests {
    struct Status: Decodable { var peer: String; var synced: Int; var pending: Int; var inFlight: Int; var interrupted: Int; var failed: Int }

    static func status(_ device: PushServeTests.Device) async throws -> Status? {
        let output = try await device.run(["status", "--json"])
        return try JSONDecoder().decode([Status].self, from: Data(output.stdout.utf8)).first { $0.peer == "nas" }
    }

    @Test func aKilledPushLeavesNothingInFlight() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let (laptop, nas) = try await PushServeTests.pair(root)
            let server = try await PushServeTests.Server(nas)
            defer { _ = server.stop() }
            #expect(try await laptop.run(["trust", nas.deviceID(), "--name", "nas", "--address", server.address]).status == 0)
            var generator = SplitMix64(seed: 113)
            for index in 0..<40 {
                try TestSupport.write(generator.bytes(60_000), to: laptop.library.appendingPathComponent(String(format: "IMG_%04d.JPG", index)))
            }
            // 2.4 MB at 256 KiB/s: about ten seconds, killed after two.
            let push = Process()
            (push.executableURL, push.arguments) = LFSyncProcess.command(
                ["push", laptop.library.path, "--to", "nas", "--bwlimit", "256", "--batch"], openFileLimit: nil)
            var environment = ProcessInfo.processInfo.environment
            environment["LFSYNC_HOME"] = laptop.home.path
            push.environment = environment
            push.standardOutput = FileHandle.nullDevice
            push.standardError = FileHandle.nullDevice
            try push.run()
            // Wait until the push is under way (rows in flight), then kill it.
            var during: Status?
            for _ in 0..<100 {
                try await Task.sleep(for: .milliseconds(100))
                during = try await Self.status(laptop)
                if let during, during.inFlight > 0 { break }
            }
            #expect((during?.inFlight ?? 0) > 0, "the running push has rows in flight: \(String(describing: during))")
            try await Task.sleep(for: .seconds(1))
            kill(push.processIdentifier, SIGKILL)
            push.waitUntilExit()
            #expect(push.terminationReason == .uncaughtSignal)

            let after = try #require(try await Self.status(laptop))
            #expect(after.inFlight == 0, "nothing is in flight once the push is gone: \(after)")
            #expect(after.interrupted > 0 && after.synced < 40, "\(after)")
            #expect(after.synced + after.interrupted + after.pending + after.failed == 40, "\(after)")

            // The next push sends what was interrupted.
            let again = try await laptop.run(["push", laptop.library.path, "--to", "nas", "--batch"])
            #expect(again.status == 0, "\(again.stderr)")
            let done = try #require(try await Self.status(laptop))
            #expect(done.synced == 40 && done.interrupted == 0 && done.inFlight == 0, "\(done)")
        }
    }
}
