import Foundation
import Testing
@testable import LocalFirstSync
@testable import LFSyncCrypto

@Suite struct DeviceIdentityTests {
    static func mode(of url: URL) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    @Test func createsOnceThenLoads() async throws {
        try await TestSupport.withTemporaryDirectory { directory in
            let url = directory.appendingPathComponent("state/keys/identity.key")
            let created = try DeviceIdentity.loadOrCreate(at: url)
            #expect(try Self.mode(of: url) == 0o600)
            #expect(try Self.mode(of: url.deletingLastPathComponent()) == 0o700)
            #expect(try Data(contentsOf: url).count == 32)
            let loaded = try DeviceIdentity.loadOrCreate(at: url)
            #expect(loaded.deviceID == created.deviceID)
            #expect(loaded.publicKey == created.publicKey)
            #expect(created.deviceID == DeviceID(publicKey: created.publicKey))
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: url.deletingLastPathComponent().path)
            #expect(leftovers == ["identity.key"], "no temporary files left behind")
        }
    }

    @Test func concurrentCreatorsAgreeOnOneKey() async throws {
        try await TestSupport.withTemporaryDirectory { directory in
            let url = directory.appendingPathComponent("race/identity.key")
            let ids = try await withThrowingTaskGroup(of: DeviceID.self) { group in
                for _ in 0..<8 {
                    group.addTask { try DeviceIdentity.loadOrCreate(at: url).deviceID }
                }
                return try await group.reduce(into: Set<DeviceID>()) { $0.insert($1) }
            }
            #expect(ids.count == 1, "every racer ends up with the key that won")
            #expect(try DeviceIdentity.load(from: url).deviceID == ids.first)
        }
    }

    @Test func refusesAKeyOthersCanRead() async throws {
        try await TestSupport.withTemporaryDirectory { directory in
            let url = directory.appendingPathComponent("identity.key")
            _ = try DeviceIdentity.loadOrCreate(at: url)
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: url.path)
            let error = #expect(throws: DeviceIdentityError.self) { try DeviceIdentity.loadOrCreate(at: url) }
            #expect(error == .insecurePermissions(path: url.path, mode: 0o644))
            #expect(error?.description.contains("0644") == true)
            #expect(error?.description.contains("chmod 600") == true)
        }
    }

    @Test func refusesWrongLengthAndNonFiles() async throws {
        try await TestSupport.withTemporaryDirectory { directory in
            let url = directory.appendingPathComponent("identity.key")
            _ = FileManager.default.createFile(atPath: url.path, contents: Data(repeating: 1, count: 31), attributes: [.posixPermissions: 0o600])
            #expect(throws: DeviceIdentityError.invalidKeyFile(path: url.path, reason: "expected 32 bytes, found 31")) {
                try DeviceIdentity.loadOrCreate(at: url)
            }
            let folder = directory.appendingPathComponent("folder.key")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
            #expect(throws: DeviceIdentityError.invalidKeyFile(path: folder.path, reason: "not a regular file")) {
                try DeviceIdentity.loadOrCreate(at: folder)
            }
            let link = directory.appendingPathComponent("link.key")
            try FileManager.default.createSymbolicLink(at: link, withDestinationURL: url)
            #expect(throws: DeviceIdentityError.invalidKeyFile(path: link.path, reason: "it is a symbolic link")) {
                try DeviceIdentity.load(from: link)
            }
            #expect(throws: DeviceIdentityError.notFound(path: directory.appendingPathComponent("none").path)) {
                try DeviceIdentity.load(from: directory.appendingPathComponent("none"))
            }
        }
    }

    @Test func loadsAKnownKey() async throws {
        try await TestSupport.withTemporaryDirectory { directory in
            let url = directory.appendingPathComponent("identity.key")
            let privateKey = [UInt8](repeating: 7, count: 32)
            _ = FileManager.default.createFile(atPath: url.path, contents: Data(privateKey), attributes: [.posixPermissions: 0o600])
            let identity = try DeviceIdentity.loadOrCreate(at: url)
            let expected = try NoiseKeyPair(privateKey: privateKey)
            #expect(identity.publicKey == expected.publicKey)
            #expect(try Data(contentsOf: url) == Data(privateKey), "an existing key is never replaced")
        }
    }

    @Test func neverPrintsThePrivateKey() {
        let identity = DeviceIdentity.generate()
        let secretHex = identity.keyPair.privateKey.map { String(format: "%02x", $0) }.joined()
        let secretBytes = identity.keyPair.privateKey.map(String.init).joined(separator: ", ")
        var dumped = ""
        dump(identity, to: &dumped)
        for text in [identity.description, identity.debugDescription, String(reflecting: identity), "\(identity)", dumped] {
            #expect(!text.contains(secretHex))
            #expect(!text.contains(secretBytes))
            #expect(text.contains(identity.deviceID.description))
        }
    }
}
