internal import CDNSSD

/// The TXT record of an lfsync advertisement (RFC 6763 §6), two short keys:
///
/// | key | value                                             |
/// |-----|---------------------------------------------------|
/// | `id`| device ID text, printable ASCII, at most 128 bytes |
/// | `v` | protocol version, decimal, `0`...`65535`, no sign or leading zeros |
///
/// Keys are short because every byte is multicast in every announcement.
/// Unknown keys are ignored, so later versions can add some. A record comes
/// from an untrusted peer: parsing never fails and never traps; what is
/// malformed is simply absent (`nil`).
package struct DiscoveryTXTRecord: Hashable, Sendable {
    package static let deviceIDKey = "id"
    package static let versionKey = "v"
    package static let maxDeviceIDBytes = 128
    /// A TXT record cannot be longer (its length is 16-bit); anything past it is ignored.
    package static let maxRecordBytes = 65_535
    /// More strings than any honest lfsync record has; the rest is ignored.
    package static let maxStrings = 64

    package var deviceID: String?
    package var protocolVersion: UInt16?

    package init(deviceID: String?, protocolVersion: UInt16?) {
        self.deviceID = deviceID
        self.protocolVersion = protocolVersion
    }

    package static func isAcceptableDeviceID(_ text: String) -> Bool {
        let bytes = text.utf8
        return (1...maxDeviceIDBytes).contains(bytes.count) && bytes.allSatisfy { (0x21...0x7E).contains($0) }
    }

    /// Parses the wire form (length-prefixed strings). Per RFC 6763 §6.4 keys
    /// are case-insensitive and the first occurrence of a key wins.
    package init(parsing record: some Collection<UInt8>) {
        let bytes = Array(record.prefix(Self.maxRecordBytes))
        var values: [String: [UInt8]] = [:]
        var seenKeys = Set<String>()
        var offset = 0
        var strings = 0
        while offset < bytes.count, strings < Self.maxStrings {
            let length = Int(bytes[offset])
            offset += 1
            // A length running past the end means a corrupt record: keep what came before.
            guard bytes.count - offset >= length else { break }
            let string = bytes[offset..<offset + length]
            offset += length
            strings += 1
            guard let (key, value) = Self.split(string), seenKeys.insert(key).inserted else { continue }
            if let value { values[key] = value }
        }
        deviceID = values[Self.deviceIDKey].flatMap(Self.deviceID(from:))
        protocolVersion = values[Self.versionKey].flatMap(Self.version(from:))
    }

    /// `key=value` gives (lowercased key, value); `key` alone gives (key, nil); junk gives nil.
    private static func split(_ string: ArraySlice<UInt8>) -> (key: String, value: [UInt8]?)? {
        let equals = string.firstIndex(of: UInt8(ascii: "="))
        let keyBytes = string[..<(equals ?? string.endIndex)]
        guard !keyBytes.isEmpty, keyBytes.allSatisfy({ (0x20...0x7E).contains($0) }) else { return nil }
        let key = String(decoding: keyBytes, as: UTF8.self).lowercased()
        guard let equals else { return (key, nil) }
        return (key, Array(string[(equals + 1)...]))
    }

    private static func deviceID(from value: [UInt8]) -> String? {
        guard (1...maxDeviceIDBytes).contains(value.count), value.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            return nil
        }
        return String(decoding: value, as: UTF8.self)
    }

    private static func version(from value: [UInt8]) -> UInt16? {
        guard (1...5).contains(value.count),
              value.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
              value.count == 1 || value.first != UInt8(ascii: "0")
        else { return nil }
        let number = value.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
        return UInt16(exactly: number)
    }

    /// The wire form, built by avahi's own `TXTRecordCreate`/`TXTRecordSetValue`
    /// so the bytes are exactly what libdns_sd users elsewhere produce.
    package func encoded() throws(DiscoveryError) -> [UInt8] {
        DNSSDEnvironment.prepare()
        var record = TXTRecordRef()
        TXTRecordCreate(&record, 0, nil)
        defer { TXTRecordDeallocate(&record) }
        var entries: [(String, [UInt8])] = []
        if let deviceID {
            guard Self.isAcceptableDeviceID(deviceID) else {
                throw .invalidAdvertisement("device ID is not 1-\(Self.maxDeviceIDBytes) printable ASCII characters")
            }
            entries.append((Self.deviceIDKey, Array(deviceID.utf8)))
        }
        if let protocolVersion {
            entries.append((Self.versionKey, Array(String(protocolVersion).utf8)))
        }
        for (key, value) in entries {
            let status = value.withUnsafeBytes { bytes in
                TXTRecordSetValue(&record, key, UInt8(bytes.count), bytes.baseAddress)
            }
            guard status == DNSServiceErrorType(kDNSServiceErr_NoError) else {
                throw .invalidAdvertisement("TXT key \(key) rejected (\(DNSSDErrorCode.name(of: status)))")
            }
        }
        let length = Int(TXTRecordGetLength(&record))
        guard length > 0, let start = TXTRecordGetBytesPtr(&record) else { return [] }
        return Array(UnsafeRawBufferPointer(start: start, count: length))
    }
}
