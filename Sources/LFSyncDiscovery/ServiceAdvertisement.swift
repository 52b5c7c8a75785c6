/// What a device announces about itself: an instance name people recognise,
/// the TCP port it listens on, its device ID and protocol version.
///
/// The service type is not part of it: it belongs to the `Discovery` object,
/// so a device always advertises under the type it browses for.
public struct ServiceAdvertisement: Hashable, Sendable {
    /// DNS-SD caps an instance name at one DNS label.
    public static let maxInstanceNameBytes = 63

    /// Shown in other devices' peer lists, e.g. "Alice's laptop".
    public var instanceName: String
    public var port: UInt16
    /// The device ID text form (see `DeviceID`), published in TXT key `id`.
    public var deviceID: String
    /// Published in TXT key `v`, so a peer can skip devices it cannot talk to
    /// before connecting.
    public var protocolVersion: UInt16

    public init(instanceName: String, port: UInt16, deviceID: String, protocolVersion: UInt16) {
        self.instanceName = instanceName
        self.port = port
        self.deviceID = deviceID
        self.protocolVersion = protocolVersion
    }

    /// Checks what every mechanism needs, so a bad advertisement fails the
    /// same way in tests (in memory) as on the network.
    package func validate() throws(DiscoveryError) {
        let nameBytes = instanceName.utf8.count
        guard nameBytes > 0 else { throw .invalidAdvertisement("the instance name is empty") }
        guard nameBytes <= Self.maxInstanceNameBytes else {
            throw .invalidAdvertisement("the instance name has \(nameBytes) bytes, at most \(Self.maxInstanceNameBytes) fit a DNS label")
        }
        guard !instanceName.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .invalidAdvertisement("the instance name contains control characters")
        }
        guard port != 0 else { throw .invalidAdvertisement("port 0 cannot be connected to") }
        guard DiscoveryTXTRecord.isAcceptableDeviceID(deviceID) else {
            throw .invalidAdvertisement(
                "the device ID must be 1 to \(DiscoveryTXTRecord.maxDeviceIDBytes) printable ASCII characters")
        }
    }
}
