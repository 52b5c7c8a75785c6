#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// This device's long-term X25519 key pair — the static key of every Noise
/// handshake — and the `DeviceID` derived from it.
///
/// Created once and kept in a private key file; losing the file means
/// becoming a new device that every peer has to trust again. The private key
/// is never printed: `description`, `debugDescription` and reflection
/// (`dump`, debuggers) show only the device ID.
public struct DeviceIdentity: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    package let keyPair: NoiseKeyPair
    public let deviceID: DeviceID

    package init(keyPair: NoiseKeyPair) {
        self.keyPair = keyPair
        deviceID = DeviceID(publicKey: keyPair.publicKey)
    }

    /// A fresh identity from the system CSPRNG, not persisted.
    public static func generate() -> DeviceIdentity {
        DeviceIdentity(keyPair: .generate())
    }

    /// The 32-byte static public key, as it travels in the handshake.
    public var publicKey: [UInt8] { keyPair.publicKey }

    /// Loads the identity stored at `url`, or creates and stores a new one if
    /// there is no file yet.
    ///
    /// Creation writes a temporary file with mode 0600 next to `url`, fsyncs
    /// it and links it into place, so a crash never leaves a half-written key
    /// and two processes racing to create one end up sharing the same key
    /// (the loser loads the winner's). Missing parent directories are created
    /// with mode 0700. Loading refuses a key file that group or others can
    /// read, like ssh does: a key that others could have copied is no identity.
    public static func loadOrCreate(at url: URL) throws(DeviceIdentityError) -> DeviceIdentity {
        let path = url.path
        do {
            return try load(from: url)
        } catch .notFound {
            try createParentDirectories(of: url)
            let identity = generate()
            var privateKey = identity.keyPair.privateKey
            defer { SecureBytes.wipe(&privateKey) }
            switch try PrivateKeyFile.createExclusively(at: path, contents: privateKey) {
            case .created: return identity
            case .alreadyExists: return try load(from: url)
            }
        }
    }

    /// Loads an existing identity; throws `.notFound` when there is none.
    public static func load(from url: URL) throws(DeviceIdentityError) -> DeviceIdentity {
        var privateKey = try PrivateKeyFile.read(at: url.path)
        defer { SecureBytes.wipe(&privateKey) }
        do {
            return DeviceIdentity(keyPair: try NoiseKeyPair(privateKey: privateKey))
        } catch {
            throw .invalidKeyFile(path: url.path, reason: error.description)
        }
    }

    private static func createParentDirectories(of url: URL) throws(DeviceIdentityError) {
        let parent = url.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(
                at: parent, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw .cannotCreateDirectory(path: parent.path, reason: "\(error)")
        }
    }

    public var description: String { "DeviceIdentity(\(deviceID))" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["deviceID": deviceID], displayStyle: .struct) }
}
