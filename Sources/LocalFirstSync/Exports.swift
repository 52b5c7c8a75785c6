// What an app names after `import LocalFirstSync`, and nothing else: the engine's own
// types, and the few of the lower layers that its API uses (assets and content IDs,
// Device IDs, the ledger and the library index, peer addresses and the TCP transport,
// discovered peers), by the names below. Everything else the layers share is `package`.
// The listing of this surface is checked in (Tests/.../API/public-api.txt): a change to it
// is deliberate.

import LFSyncContent
import LFSyncCrypto
import LFSyncDiscovery
import LFSyncLanding
import LFSyncStore
import LFSyncSystem
import LFSyncTCP
import LFSyncTransport

// Who is who: a device's key and the ID it proves in every handshake.
public typealias DeviceIdentity = LFSyncCrypto.DeviceIdentity
public typealias DeviceIdentityError = LFSyncCrypto.DeviceIdentityError
public typealias DeviceID = LFSyncCrypto.DeviceID
public typealias DeviceIDError = LFSyncCrypto.DeviceIDError
public typealias Hash256 = LFSyncCrypto.Hash256

// What a library holds, and how it is scanned.
public typealias Asset = LFSyncContent.Asset
public typealias AssetKind = LFSyncContent.AssetKind
public typealias FileRole = LFSyncContent.FileRole
public typealias FileManifest = LFSyncContent.FileManifest
public typealias ChunkRef = LFSyncContent.ChunkRef
public typealias RelativePath = LFSyncContent.RelativePath
public typealias ContentID = LFSyncContent.ContentID
public typealias LibraryScanner = LFSyncContent.LibraryScanner
public typealias LibraryScan = LFSyncContent.LibraryScan
public typealias ScanProgress = LFSyncContent.ScanProgress
public typealias ScanExclusions = LFSyncContent.ScanExclusions
public typealias IgnoreRules = LFSyncContent.IgnoreRules
public typealias SettledFiles = LFSyncContent.SettledFiles
public typealias SkippedEntry = LFSyncContent.SkippedEntry
public typealias IndexedFile = LFSyncContent.IndexedFile
public typealias ScanMemory = LFSyncContent.ScanMemory
public typealias ScanObserver = LFSyncContent.ScanObserver
public typealias SystemError = LFSyncSystem.SystemError

// What a device remembers: the ledger, and a library's scan cache and chunk index.
public typealias SyncStateStore = LFSyncStore.SyncStateStore
public typealias SyncState = LFSyncStore.SyncState
public typealias SQLiteError = LFSyncStore.SQLiteError
public typealias StateDatabase = LFSyncStore.StateDatabase
public typealias LibraryIndex = LFSyncStore.LibraryIndex
public typealias ScanCache = LFSyncStore.ScanCache
public typealias ChunkIndex = LFSyncStore.ChunkIndex
public typealias NewFileModes = LFSyncLanding.NewFileModes
public typealias ChmodRules = LFSyncLanding.ChmodRules
public typealias InstalledFile = LFSyncLanding.InstalledFile

// How devices reach each other.
public typealias PeerAddress = LFSyncTransport.PeerAddress
public typealias Transport = LFSyncTransport.Transport
public typealias Connection = LFSyncTransport.Connection
public typealias Listener = LFSyncTransport.Listener
public typealias TransportError = LFSyncTransport.TransportError
public typealias BandwidthBudget = LFSyncTransport.BandwidthBudget
public typealias TransferRate = LFSyncTransport.TransferRate
public typealias TCPTransport = LFSyncTCP.TCPTransport
public typealias Discovery = LFSyncDiscovery.Discovery
public typealias DiscoveryEvent = LFSyncDiscovery.DiscoveryEvent
public typealias DiscoveredPeer = LFSyncDiscovery.DiscoveredPeer
public typealias DiscoveryError = LFSyncDiscovery.DiscoveryError
public typealias DiscoveryServiceType = LFSyncDiscovery.DiscoveryServiceType
public typealias DNSSDDiscovery = LFSyncDiscovery.DNSSDDiscovery
public typealias StaticDiscovery = LFSyncDiscovery.StaticDiscovery
public typealias StaticPeerAddress = LFSyncDiscovery.StaticPeerAddress
public typealias ServiceAdvertisement = LFSyncDiscovery.ServiceAdvertisement
public typealias AdvertisementHandle = LFSyncDiscovery.AdvertisementHandle
public typealias LibraryPath = LFSyncContent.LibraryPath
