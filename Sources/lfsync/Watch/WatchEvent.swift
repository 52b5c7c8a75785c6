import Foundation
import LocalFirstSync
import LFSyncSystem
import LFSyncCrypto
import LFSyncContent
import LFSyncStore
import LFSyncTransport
import LFSyncTCP
import LFSyncDiscovery

/// Everything `watch`'s one loop reacts to, from every source, in one stream.
enum WatchEvent: Sendable {
    /// A library tree changed (or its watcher fell back); `library` indexes the PATHs.
    case tree(library: Int, TreeWatcher.Event)
    /// The deadline the loop last set has come.
    case wake
    /// `lfsync trust`/`untrust` rewrote the config (already applied to the engine's trust).
    case config(DeviceConfig)
    /// A target device was seen on the network: dial it now.
    case appeared(DeviceID)
    case stop(signal: Int32)
}

/// One line of `watch --json`: an event with stable keys.
struct WatchLogEvent: Encodable {
    var event: String
    var time: String
    var library: String?
    var peer: String?
    var assets: Int?
    var stored: Int?
    var failed: Int?
    var chunkBytesSent: UInt64?
    /// A sync's chunk bytes fetched by the peer from this device (ChunkRequests).
    var bytesFetched: UInt64?
    var seconds: Double?
    var deferred: Int?
    var directories: Int?
    var message: String?

    init(_ event: String, library: String? = nil, peer: String? = nil, message: String? = nil) {
        self.event = event
        time = JSONOutput.timestamp(Date())
        self.library = library
        self.peer = peer
        self.message = message
    }

    func line() throws -> String {
        try JSONOutput.render(self, pretty: false)
    }
}
