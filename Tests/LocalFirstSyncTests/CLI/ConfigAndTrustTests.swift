import Foundation
import Testing
@testable import LocalFirstSync

/// `config.json` as real `lfsync` processes write and read it: private,
/// written whole, a damaged one explained; and the two trust permissions
/// (`--auto-accept`, `--allow-pull`) stored apart and shown apart.
@Suite(.timeLimit(.minutes(3))) struct ConfigAndTrustTests {
    typealias Device = PushServeTests.Device

    /// The trusted devices as `trust` stored them, read straight from the file.
    static func storedPeers(of device: Device) throws -> [StoredPeer] {
        struct StoredConfig: Decodable { var peers: [StoredPeer] }
        return try JSONDecoder().decode(StoredConfig.self, from: Data(contentsOf: device.home.appendingPathComponent("config.json"))).peers
    }

    struct StoredPeer: Decodable {
        var name: String
        var autoAccept: Bool
        /// Optional here, so that a file without the key is told apart from one with `false`.
        var allowPull: Bool?
    }

    static func mode(of url: URL) -> mode_t? {
        var info = stat()
        return stat(url.path, &info) == 0 ? info.st_mode & 0o7777 : nil
    }

    /// A second device's ID, made by a real `lfsync init`, to trust.
    static func otherDeviceID(in root: URL) async throws -> String {
        let other = try Device("other", in: root)
        #expect(try await other.run(["init", "--name", "other"]).status == 0)
        return try await other.deviceID()
    }

    @Test func configIsWrittenPrivatelyAndLeavesNoTemporaryFile() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let device = try Device("d", in: root)
            #expect(try await device.run(["init", "--name", "d"]).status == 0)
            let configURL = device.home.appendingPathComponent("config.json")
            #expect(Self.mode(of: configURL) == 0o600)

            // A config left world-readable by an older lfsync becomes private at the next write.
            #expect(chmod(configURL.path, 0o644) == 0)
            let id = try await Self.otherDeviceID(in: root)
            #expect(try await device.run(["trust", id, "--name", "other"]).status == 0)
            #expect(Self.mode(of: configURL) == 0o600)
            #expect(try Self.storedPeers(of: device).map(\.name) == ["other"])

            let leftovers = try FileManager.default.contentsOfDirectory(atPath: device.home.path)
                .filter { $0 != "config.json" && $0.contains("config.json") }
            #expect(leftovers.isEmpty, "temporary files left in the state directory: \(leftovers)")
        }
    }

    @Test func damagedConfigNamesTheFileAndWhatToDo() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let device = try Device("d", in: root)
            #expect(try await device.run(["init", "--name", "d"]).status == 0)
            let configURL = device.home.appendingPathComponent("config.json")
            let id = try await Self.otherDeviceID(in: root)
            let cases: [(contents: String, reason: String)] = [
                ("", "it is empty"),
                ("{\n  \"name\" : \"d\",\n  \"peers\" : [\n    {\n      \"autoAccept\" : true,\n      \"deviceID\" : \"\(id.prefix(20))", "it is not valid JSON"),
                ("{\"peers\": []}", "'name' is missing"),
                ("{\"name\": \"d\", \"peers\": [{\"name\": \"x\", \"deviceID\": \"\(id)\", \"autoAccept\": \"yes\"}]}", "'peers[0].autoAccept' is not true or false"),
            ]
            for (contents, reason) in cases {
                try Data(contents.utf8).write(to: configURL)
                for arguments in [["id"], ["status"], ["trust", id]] {
                    let output = try await device.run(arguments)
                    #expect(output.status == 65, "\(arguments) with \(reason): \(output.stderr)")
                    #expect(output.stderr.contains("\(configURL.path) is damaged: \(reason)"), "\(arguments): \(output.stderr)")
                    #expect(output.stderr.contains("lfsync init"), "no way out offered: \(output.stderr)")
                    #expect(!output.stderr.contains("DecodingError") && !output.stderr.contains("Fatal error"), "\(output.stderr)")
                }
                // Nothing was written over the damaged file: it is still there to be repaired.
                #expect(try String(contentsOf: configURL, encoding: .utf8) == contents)
            }
        }
    }

    @Test func allowPullIsParsedStoredAndShownApartFromAutoAccept() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let device = try Device("d", in: root)
            #expect(try await device.run(["init", "--name", "d"]).status == 0)
            let id = try await Self.otherDeviceID(in: root)

            let pullOnly = try await device.run(["trust", id, "--name", "nas", "--allow-pull"])
            #expect(pullOnly.status == 0, "\(pullOnly.stderr)")
            #expect(pullOnly.stderr.contains("letting it pull") && !pullOnly.stderr.contains("without asking"), "\(pullOnly.stderr)")
            var stored = try #require(try Self.storedPeers(of: device).first)
            #expect(stored.allowPull == true && stored.autoAccept == false)

            struct Row: Decodable { var deviceID: String?; var trusted: Bool; var autoAccept: Bool; var allowPull: Bool }
            let peers = try await device.run(["peers", "--timeout", "0.2", "--json"])
            let row = try #require(try JSONDecoder().decode([Row].self, from: Data(peers.stdout.utf8)).first { $0.deviceID == id })
            #expect(row.trusted && row.allowPull && !row.autoAccept)
            let peersText = try await device.run(["peers", "--timeout", "0.2"])
            #expect(peersText.stdout.contains("this device accepts its pushes unasked: no, lets it pull: yes"), "\(peersText.stdout)")

            struct Status: Decodable { var deviceID: String; var autoAccept: Bool; var allowPull: Bool }
            let status = try await device.run(["status", "--json"])
            let line = try #require(try JSONDecoder().decode([Status].self, from: Data(status.stdout.utf8)).first { $0.deviceID == id })
            #expect(line.allowPull && !line.autoAccept)
            #expect(try await device.run(["status"]).stdout.contains("this device accepts its pushes unasked: no, lets it pull: yes"))

            // Trusting again sets the permissions to what that run says: auto-accept no longer brings pulls along.
            #expect(try await device.run(["trust", id, "--auto-accept"]).status == 0)
            stored = try #require(try Self.storedPeers(of: device).first)
            #expect(stored.autoAccept == true && stored.allowPull == false && stored.name == "nas")
            #expect(try await device.run(["status"]).stdout.contains("this device accepts its pushes unasked: yes, lets it pull: no"))

            // A flag, never an option with a value.
            let valued = try await device.run(["trust", id, "--allow-pull=yes"])
            #expect(valued.status == 64)
            #expect(valued.stderr.contains("takes no value"), "\(valued.stderr)")
            #expect(try await device.run(["help", "trust"]).stdout.contains("--allow-pull"))
        }
    }

    @Test func configFromBeforeAllowPullLoadsWithPullNotAllowed() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let device = try Device("d", in: root)
            #expect(try await device.run(["init", "--name", "d"]).status == 0)
            let id = try await Self.otherDeviceID(in: root)
            // Exactly what an lfsync before --allow-pull wrote for `trust ID --name nas --auto-accept`.
            let old = "{\n  \"name\" : \"d\",\n  \"peers\" : [\n    {\n      \"autoAccept\" : true,\n      \"deviceID\" : \"\(id)\",\n      \"name\" : \"nas\"\n    }\n  ]\n}"
            try Data(old.utf8).write(to: device.home.appendingPathComponent("config.json"))

            struct Status: Decodable { var peer: String; var autoAccept: Bool; var allowPull: Bool }
            let status = try await device.run(["status", "--json"])
            #expect(status.status == 0, "\(status.stderr)")
            let line = try #require(try JSONDecoder().decode([Status].self, from: Data(status.stdout.utf8)).first)
            #expect(line.peer == "nas" && line.autoAccept && !line.allowPull)

            // The next write records the field explicitly.
            #expect(try await device.run(["init"]).status == 0)
            #expect(try Self.storedPeers(of: device).first?.allowPull == false)
        }
    }
}
