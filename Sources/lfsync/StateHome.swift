import Foundation
import LocalFirstSync
import LFSyncSystem
import LFSyncCrypto
import LFSyncContent
import LFSyncStore
import LFSyncTransport
import LFSyncTCP
import LFSyncDiscovery

/// Where this device keeps its state: `$LFSYNC_HOME`, else
/// `$XDG_DATA_HOME/lfsync`, else `$HOME/.local/share/lfsync` (XDG default).
struct StateHome {
    let url: URL

    init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        if let home = environment["LFSYNC_HOME"], !home.isEmpty {
            url = URL(fileURLWithPath: home, isDirectory: true)
        } else if let data = environment["XDG_DATA_HOME"], !data.isEmpty {
            url = URL(fileURLWithPath: data, isDirectory: true).appendingPathComponent("lfsync", isDirectory: true)
        } else {
            // $HOME first, as the XDG spec and every shell tool read it (systemd sets it
            // for a user service); Foundation's own answer for root ignores it.
            let home = environment["HOME"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0, isDirectory: true) }
                ?? FileManager.default.homeDirectoryForCurrentUser
            url = home.appendingPathComponent(".local/share/lfsync", isDirectory: true)
        }
    }

    var identityURL: URL { url.appendingPathComponent("identity.key") }
    var configURL: URL { url.appendingPathComponent("config.json") }
    var ledgerURL: URL { url.appendingPathComponent("ledger.sqlite") }
    var lockURL: URL { url.appendingPathComponent("lock") }

    /// Per-library index (scan cache + chunk index), keyed by the library's real path
    /// so that scanning a folder never writes into it.
    func libraryIndex(for library: URL) -> URL {
        let real = library.resolvingSymlinksInPath().standardizedFileURL.path
        let key = Blake2b.hash(Array(real.utf8)).hex.prefix(16)
        return url.appendingPathComponent("libraries/\(key).sqlite")
    }

    func createIfNeeded() throws {
        try FileManager.default.createDirectory(at: url.appendingPathComponent("libraries"), withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
    }

    var isInitialized: Bool { FileManager.default.fileExists(atPath: identityURL.path) }

    /// The identity, or a clear "run lfsync init" failure.
    func identity() throws -> DeviceIdentity {
        guard isInitialized else {
            throw CommandFailure(message: "no identity in \(url.path): run 'lfsync init' first", exitCode: .usage)
        }
        do { return try DeviceIdentity.load(from: identityURL) } catch {
            throw CommandFailure(message: "cannot load the identity: \(error)", exitCode: .dataError)
        }
    }

    func ledger() throws -> SyncStateStore {
        do { return try SyncStateStore.onDisk(ledgerURL) } catch {
            throw CommandFailure(message: "cannot open the ledger \(ledgerURL.path): \(error)", exitCode: .dataError)
        }
    }

    func index(for library: URL) throws -> LibraryIndex {
        try createIfNeeded()
        do { return try LibraryIndex.open(at: libraryIndex(for: library)) } catch {
            throw CommandFailure(message: "cannot open the scan cache: \(error)", exitCode: .dataError)
        }
    }
}
