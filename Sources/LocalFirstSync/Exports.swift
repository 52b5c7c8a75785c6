// `import LocalFirstSync` is all an app writes: the types of the public API
// that live in lower layers (asset and content types, Device IDs, the ledger,
// peer addresses and the TCP transport, discovered peers) come with it. The
// wire codec stays behind the engine.
@_exported import LFSyncSystem
@_exported import LFSyncCrypto
@_exported import LFSyncContent
@_exported import LFSyncStore
@_exported import LFSyncTransport
@_exported import LFSyncTCP
@_exported import LFSyncDiscovery
