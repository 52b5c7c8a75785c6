import Foundation
import LocalFirstSync
import LFSyncSystem
import LFSyncCrypto
import LFSyncContent
import LFSyncStore
import LFSyncTransport
import LFSyncTCP
import LFSyncDiscovery

/// Reading and writing `config.json`. Every command reads it, so a damaged
/// file must say which file and what to do, and a write must never leave one
/// damaged: it is written like the identity key (`DurableFile`).
extension DeviceConfig {
    /// Far above any real config (a few hundred bytes per trusted device).
    static let maximumFileSize = 4 << 20

    /// The config at `url`, for a command that reads or dials the devices it lists: one that
    /// lists this device's own ID (a file copied from another machine, or edited by hand) is
    /// refused, so that no command ever asks this device whether it holds its own files
    /// and counts the answer as another copy.
    static func load(from url: URL, ownID: DeviceID) throws -> DeviceConfig {
        let config = try load(from: url)
        if let own = config.peers.first(where: { (try? DeviceID(parsing: $0.deviceID)) == ownID }) {
            throw CommandFailure(
                message: """
                    \(url.path) lists this device's own ID as a trusted device ('\(own.name)'): a device cannot be \
                    another device's copy of itself. Remove it with 'lfsync untrust \(own.name)' (was the file copied \
                    from another machine?)
                    """,
                exitCode: .dataError)
        }
        return config
    }

    /// The config at `url` as it is, own ID or not (for `untrust`, which removes one, and
    /// commands that dial nobody); a default one (named after the host) when there is no file yet.
    static func load(from url: URL) throws -> DeviceConfig {
        guard let data = try contents(of: url) else {
            return DeviceConfig(name: ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "lfsync")
        }
        guard !data.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) else {
            throw damaged(url, "it is empty (probably cut short by a crash or a full disk)")
        }
        let config: DeviceConfig
        do { config = try JSONDecoder().decode(DeviceConfig.self, from: data) } catch let error as DecodingError {
            throw damaged(url, explain(error))
        } catch {
            throw damaged(url, "\(error)")
        }
        for peer in config.peers {
            guard (try? DeviceID(parsing: peer.deviceID)) != nil else {
                throw CommandFailure(message: "\(url.path): '\(peer.deviceID)' is not a valid Device ID; correct it, or remove that device from the file", exitCode: .dataError)
            }
        }
        return config
    }

    /// Writes the config durably with mode 0600: a crash leaves the old file or the new one.
    func save(to url: URL) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data = try encoder.encode(self)
        do { try DurableFile.write(Array(data), to: url.path, mode: 0o600, placement: .replace) } catch {
            throw CommandFailure(message: "cannot write \(url.path): \(error.message)", exitCode: .ioError)
        }
    }

    /// The file's bytes, or nil when it does not exist. Any other failure to read
    /// stops the command: treating an unreadable config as absent would let the
    /// next save replace the trusted devices with an empty list.
    private static func contents(of url: URL) throws -> Data? {
        let descriptor = open(url.path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw CommandFailure(message: "cannot read \(url.path): \(String(cString: strerror(errno)))", exitCode: .ioError)
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw CommandFailure(message: "cannot read \(url.path): \(String(cString: strerror(errno)))", exitCode: .ioError)
        }
        guard info.st_mode & S_IFMT == S_IFREG else { throw damaged(url, "it is not a regular file") }
        guard info.st_size <= maximumFileSize else { throw damaged(url, "it is too large to be a config file (\(info.st_size) bytes)") }
        do { return try handle.read(upToCount: maximumFileSize) ?? Data() } catch {
            throw CommandFailure(message: "cannot read \(url.path): \(error.localizedDescription)", exitCode: .ioError)
        }
    }

    private static func damaged(_ url: URL, _ reason: String) -> CommandFailure {
        CommandFailure(
            message: """
                \(url.path) is damaged: \(reason).
                Restore it from a backup, or move it aside and run 'lfsync init' and 'lfsync trust' again for each device \
                (this device keeps its Device ID: that lives in identity.key).
                """,
            exitCode: .dataError)
    }

    /// What is wrong, in words, with the field's place in the file ("peers[1].deviceID").
    private static func explain(_ error: DecodingError) -> String {
        func path(_ codingPath: [any CodingKey], _ last: (any CodingKey)? = nil) -> String {
            var text = ""
            for key in codingPath + [last].compactMap({ $0 }) {
                if let index = key.intValue { text += "[\(index)]" } else { text += text.isEmpty ? key.stringValue : ".\(key.stringValue)" }
            }
            return text.isEmpty ? "the top level" : "'\(text)'"
        }
        switch error {
        case let .dataCorrupted(context) where context.codingPath.isEmpty:
            return "it is not valid JSON (cut short, or edited by hand?)"
        case let .dataCorrupted(context):
            return "\(path(context.codingPath)) is invalid"
        case let .keyNotFound(key, context):
            return "\(path(context.codingPath, key)) is missing"
        case let .typeMismatch(type, context):
            return "\(path(context.codingPath)) is not \(typeName(type))"
        case let .valueNotFound(type, context):
            return "\(path(context.codingPath)) is null, not \(typeName(type))"
        @unknown default:
            return "\(error)"
        }
    }

    private static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "text"
        case is Bool.Type: "true or false"
        case is [TrustedPeer].Type, is [Any].Type: "a list"
        default: "the expected kind of value"
        }
    }
}
