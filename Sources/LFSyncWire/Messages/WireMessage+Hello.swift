import LFSyncSystem

extension WireMessage {
    /// The first message each side sends after the handshake: who it is (for
    /// humans — the cryptographic identity is the Noise static key), which
    /// protocol version it speaks and which optional features it has.
    ///
    /// `protocolVersion` is the first field and stays the first field in
    /// every future version, so any peer can read it and answer an unknown
    /// version with a clear Error instead of misparsing the rest.
    package struct Hello: WireMessagePayload {
        package static let maxDeviceNameBytes = 64
        package static let maxSoftwareVersionBytes = 32
        static let messageType = WireMessageType.hello

        package var protocolVersion: UInt16
        /// Shown in consent prompts and peer lists; never trusted for identity.
        package var deviceName: String
        package var softwareVersion: String
        package var capabilities: WireCapabilities

        /// `deviceName` and `softwareVersion` must satisfy the text limits
        /// (use `WireText.fitted` for host names) or `frame()` fails.
        package init(
            protocolVersion: UInt16 = WireProtocol.version, deviceName: String,
            softwareVersion: String = LFSyncVersion.current, capabilities: WireCapabilities = .supported
        ) {
            self.protocolVersion = protocolVersion
            self.deviceName = deviceName
            self.softwareVersion = softwareVersion
            self.capabilities = capabilities
        }

        func encode(into writer: inout ByteWriter) throws(WireError) {
            try Self.checking { () throws(ByteReaderError) in
                try WireText.validate(deviceName, limit: Self.maxDeviceNameBytes, field: "device name")
                try WireText.validate(softwareVersion, limit: Self.maxSoftwareVersionBytes, field: "software version")
            }
            writer.write(protocolVersion)
            writer.writeWireText(deviceName)
            writer.writeWireText(softwareVersion)
            writer.write(capabilities.rawValue)
        }

        init(from reader: inout ByteReader) throws(WireError) {
            let version = try Self.decoding { () throws(ByteReaderError) in try reader.readUInt16() }
            guard WireProtocol.supportedVersions.contains(version) else { throw .unsupportedProtocolVersion(version) }
            protocolVersion = version
            (deviceName, softwareVersion, capabilities) = try Self.decoding { () throws(ByteReaderError) in
                (try reader.readWireText(limit: Self.maxDeviceNameBytes, field: "device name"),
                 try reader.readWireText(limit: Self.maxSoftwareVersionBytes, field: "software version"),
                 WireCapabilities(rawValue: try reader.readUInt32()))
            }
        }
    }
}
