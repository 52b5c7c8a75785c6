import LFSyncCrypto

/// Which peers may skip the questions. Pre-trusted devices are what make
/// unattended (cron) use possible; everyone else needs a yes from a person.
///
/// Taking a device's files and handing it ours are separate permissions: a
/// phone whose photos a NAS accepts unasked must not thereby be able to pull
/// the whole library, with everything every other device sent there.
public struct TrustPolicy: Sendable {
    public struct Entry: Sendable, Hashable {
        public var deviceID: DeviceID
        /// Accept this peer's connections without asking.
        public var acceptsConnections: Bool
        /// Accept this peer's offers without asking.
        public var acceptsOffers: Bool
        /// Answer this peer's Pull: offer it everything the pull handler lists
        /// that it lacks. Never implied by `acceptsOffers`.
        public var mayPull: Bool

        public init(deviceID: DeviceID, acceptsConnections: Bool = true, acceptsOffers: Bool = false, mayPull: Bool = false) {
            self.deviceID = deviceID
            self.acceptsConnections = acceptsConnections
            self.acceptsOffers = acceptsOffers
            self.mayPull = mayPull
        }
    }

    public var entries: [DeviceID: Entry]

    public init(_ entries: [Entry] = []) {
        self.entries = Dictionary(entries.map { ($0.deviceID, $0) }, uniquingKeysWith: { _, last in last })
    }

    public func acceptsConnection(from id: DeviceID) -> Bool { entries[id]?.acceptsConnections ?? false }
    public func acceptsOffers(from id: DeviceID) -> Bool { entries[id]?.acceptsOffers ?? false }
    /// The set of devices allowed to pull is exactly those marked `mayPull`; nobody else.
    public func mayPull(_ id: DeviceID) -> Bool { entries[id]?.mayPull ?? false }
}
