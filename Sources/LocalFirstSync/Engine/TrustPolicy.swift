/// Which peers may skip the questions. Pre-trusted devices are what make
/// unattended (cron) use possible; everyone else needs a yes from a person.
public struct TrustPolicy: Sendable {
    public struct Entry: Sendable, Hashable {
        public var deviceID: DeviceID
        /// Accept this peer's connections without asking.
        public var acceptsConnections: Bool
        /// Accept this peer's offers (and pulls) without asking.
        public var acceptsOffers: Bool

        public init(deviceID: DeviceID, acceptsConnections: Bool = true, acceptsOffers: Bool = false) {
            self.deviceID = deviceID
            self.acceptsConnections = acceptsConnections
            self.acceptsOffers = acceptsOffers
        }
    }

    public var entries: [DeviceID: Entry]

    public init(_ entries: [Entry] = []) {
        self.entries = Dictionary(entries.map { ($0.deviceID, $0) }, uniquingKeysWith: { _, last in last })
    }

    public func acceptsConnection(from id: DeviceID) -> Bool { entries[id]?.acceptsConnections ?? false }
    public func acceptsOffers(from id: DeviceID) -> Bool { entries[id]?.acceptsOffers ?? false }
}
