import LFSyncCrypto
import LFSyncStore

/// How the ledger's rows and the trust list meet: the key a trusted device's rows are filed
/// under, and the name a Device ID is shown by.
extension DeviceConfig {
    /// Each trusted device's name and ledger key (its Device ID's text form; an ID that does
    /// not parse is kept as written).
    var ledgerKeys: [(name: String, key: PeerKey, deviceID: String)] {
        peers.map { ($0.name, PeerKey(rawValue: (try? DeviceID(parsing: $0.deviceID))?.description ?? $0.deviceID), $0.deviceID) }
    }

    /// The name this device gave a Device ID (text form), else its short form.
    func displayName(ofDeviceID id: String) -> String {
        guard let parsed = try? DeviceID(parsing: id) else { return id }
        return trusted(parsed)?.name ?? parsed.shortForm
    }
}
