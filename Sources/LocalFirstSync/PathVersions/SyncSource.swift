import LFSyncCrypto
import LFSyncWire

/// What a device that asked a peer to sync with it (`LocalSync.requestSync`) answers that
/// peer while the request is open: the versions of the library it pushes, and chunks of its
/// files — the peer reads both to apply the sync, whether or not it may pull otherwise.
package struct SyncSource: Sendable {
    package var pathStates: @Sendable (WireMessage.PathStateRequest) async -> WireMessage.PathStateReport
    /// A chunk's bytes, read now and checked against `hash`; nil when no file has it.
    package var chunk: @Sendable (_ hash: Hash256, _ length: UInt32) async -> [UInt8]?

    package init(
        pathStates: @escaping @Sendable (WireMessage.PathStateRequest) async -> WireMessage.PathStateReport,
        chunk: @escaping @Sendable (Hash256, UInt32) async -> [UInt8]?
    ) {
        self.pathStates = pathStates
        self.chunk = chunk
    }
}
