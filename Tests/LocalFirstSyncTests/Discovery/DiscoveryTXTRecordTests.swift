import Testing
@testable import LocalFirstSync
@testable import LFSyncDiscovery

@Suite struct DiscoveryTXTRecordTests {
    /// A TXT record from its strings, each prefixed by its length, as on the wire.
    static func record(_ strings: [[UInt8]]) -> [UInt8] {
        strings.flatMap { [UInt8(truncatingIfNeeded: $0.count)] + $0 }
    }

    static func record(_ strings: String...) -> [UInt8] {
        record(strings.map { Array($0.utf8) })
    }

    @Test func encodesWithAvahiAndParsesBack() throws {
        let deviceID = "ZMXVCYH-4D57AL7-JK66SOT-IC2I3IO-XFU6AJT-VJTSM2V-RZVLZ3V-BFAPLAB"
        for version: UInt16 in [0, 1, 65535] {
            let encoded = try DiscoveryTXTRecord(deviceID: deviceID, protocolVersion: version).encoded()
            #expect(Set(Self.strings(of: encoded)) == ["id=\(deviceID)", "v=\(version)"])
            #expect(DiscoveryTXTRecord(parsing: encoded) == DiscoveryTXTRecord(deviceID: deviceID, protocolVersion: version))
        }
        let longest = String(repeating: "A", count: DiscoveryTXTRecord.maxDeviceIDBytes)
        let encoded = try DiscoveryTXTRecord(deviceID: longest, protocolVersion: 1).encoded()
        #expect(DiscoveryTXTRecord(parsing: encoded).deviceID == longest)
    }

    @Test func encodingRejectsUnacceptableDeviceIDs() {
        for deviceID in ["", "with space", "tab\t", "ünïcode", String(repeating: "A", count: 129)] {
            #expect(throws: DiscoveryError.self) {
                try DiscoveryTXTRecord(deviceID: deviceID, protocolVersion: 1).encoded()
            }
        }
    }

    @Test func missingKeysAreNil() {
        #expect(DiscoveryTXTRecord(parsing: []) == DiscoveryTXTRecord(deviceID: nil, protocolVersion: nil))
        #expect(DiscoveryTXTRecord(parsing: [0]) == DiscoveryTXTRecord(deviceID: nil, protocolVersion: nil))
        #expect(DiscoveryTXTRecord(parsing: Self.record("id=ABC")) == DiscoveryTXTRecord(deviceID: "ABC", protocolVersion: nil))
        #expect(DiscoveryTXTRecord(parsing: Self.record("v=2", "other=x")) == DiscoveryTXTRecord(deviceID: nil, protocolVersion: 2))
        // A key without "=" is a boolean attribute: present, but without a value.
        #expect(DiscoveryTXTRecord(parsing: Self.record("id", "v")) == DiscoveryTXTRecord(deviceID: nil, protocolVersion: nil))
    }

    @Test(arguments: ["", "abc", "-1", "+1", " 1", "1 ", "0x1", "65536", "70000", "123456", "007", "01", "1.0", "１"])
    func malformedVersionsAreNil(text: String) {
        let parsed = DiscoveryTXTRecord(parsing: Self.record("id=X", "v=\(text)"))
        #expect(parsed.protocolVersion == nil)
        #expect(parsed.deviceID == "X")
    }

    @Test func versionBounds() {
        #expect(DiscoveryTXTRecord(parsing: Self.record("v=0")).protocolVersion == 0)
        #expect(DiscoveryTXTRecord(parsing: Self.record("v=65535")).protocolVersion == 65535)
    }

    @Test func hostileDeviceIDsAreNil() {
        let hostile: [[UInt8]] = [
            Array("id=".utf8),
            Array("id=has space".utf8),
            Array("id=nul\u{0}byte".utf8),
            Array("id=\u{1B}[31mred".utf8),
            Array("id=ünïcode".utf8),
            Array("id=".utf8) + [0xFF, 0xFE],
            Array("id=".utf8) + Array(repeating: UInt8(ascii: "A"), count: 129),
            Array("id=".utf8) + Array(repeating: UInt8(ascii: "A"), count: 252),
        ]
        for string in hostile {
            #expect(DiscoveryTXTRecord(parsing: Self.record([string, Array("v=1".utf8)]))
                == DiscoveryTXTRecord(deviceID: nil, protocolVersion: 1))
        }
    }

    @Test func firstOccurrenceWinsAndKeysIgnoreCase() {
        #expect(DiscoveryTXTRecord(parsing: Self.record("ID=FIRST", "id=SECOND", "V=1", "v=2"))
            == DiscoveryTXTRecord(deviceID: "FIRST", protocolVersion: 1))
        // A first, malformed occurrence still wins: a later one cannot override it.
        #expect(DiscoveryTXTRecord(parsing: Self.record("v=x", "v=2")).protocolVersion == nil)
        // Strings with an empty key are skipped, not taken as keys.
        #expect(DiscoveryTXTRecord(parsing: Self.record("=id=X", "id=Y")).deviceID == "Y")
    }

    @Test func truncatedRecordsKeepWhatCameBefore() {
        let good = Self.record("id=ABC", "v=1")
        #expect(DiscoveryTXTRecord(parsing: good + [200, 0x41]) == DiscoveryTXTRecord(deviceID: "ABC", protocolVersion: 1))
        #expect(DiscoveryTXTRecord(parsing: [50] + Array("id=ABC".utf8)) == DiscoveryTXTRecord(deviceID: nil, protocolVersion: nil))
    }

    @Test func tooManyStringsAreIgnored() {
        let padding = Array(repeating: Array("x=1".utf8), count: DiscoveryTXTRecord.maxStrings)
        #expect(DiscoveryTXTRecord(parsing: Self.record(padding + [Array("id=LATE".utf8)])).deviceID == nil)
        let fits = Array(padding.dropLast())
        #expect(DiscoveryTXTRecord(parsing: Self.record(fits + [Array("id=LAST".utf8)])).deviceID == "LAST")
    }

    @Test func randomBytesNeverTrap() {
        var generator = DiscoveryFuzzGenerator(seed: 7)
        for round in 0..<2000 {
            var bytes = generator.bytes(Int(generator.next() % 600))
            // Every few rounds, plant the real keys so the value paths run too.
            if round % 3 == 0 { bytes = Self.record("id=X", "v=1") + bytes }
            let parsed = DiscoveryTXTRecord(parsing: bytes)
            if let deviceID = parsed.deviceID { #expect(DiscoveryTXTRecord.isAcceptableDeviceID(deviceID)) }
        }
        _ = DiscoveryTXTRecord(parsing: [UInt8](repeating: 0xFF, count: 100_000))
    }

    private static func strings(of record: [UInt8]) -> [String] {
        var strings: [String] = []
        var offset = 0
        while offset < record.count {
            let length = Int(record[offset])
            strings.append(String(decoding: record[(offset + 1)..<min(record.count, offset + 1 + length)], as: UTF8.self))
            offset += 1 + length
        }
        return strings
    }
}

@Suite struct DiscoveryServiceTypeTests {
    @Test(arguments: ["lfsync", "_lfsync", "_lfsync._tcp", "_lfsync._tcp.", "LFSync"])
    func acceptsSpellings(text: String) throws {
        #expect(try DiscoveryServiceType(text) == .lfsync)
        #expect(try DiscoveryServiceType(text).description == "_lfsync._tcp")
    }

    @Test(arguments: ["", "_", "_._tcp", "-lfsync", "lfsync-", "lf--sync", "123", "lf.sync", "lf sync",
                      "abcdefghijklmnop", "_lfsync._udp", "lfsync\u{0}"])
    func rejectsInvalidNames(text: String) {
        #expect(throws: DiscoveryError.self) { try DiscoveryServiceType(text) }
    }
}
