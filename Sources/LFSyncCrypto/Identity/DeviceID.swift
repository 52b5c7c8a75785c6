/// The name of a device: BLAKE2b-256 of its static X25519 public key.
///
/// Hashing (instead of showing the key itself) gives a fixed-size name that
/// says nothing about the key type, so the key scheme could change without
/// changing how IDs look. The text form is made for humans: RFC 4648 base32
/// (52 characters), cut into 4 groups of 13 characters, each followed by a
/// Luhn mod 32 check character, shown as 8 blocks of 7 separated by `-`:
///
///     ZMXVCYH-4D57AL7-JK66SOT-IC2I3IO-XFU6AJT-VJTSM2V-RZVLZ3V-BFAPLAB
///
/// A mistyped character is caught by the check of its group before the ID is
/// ever compared with anything. PROTOCOL.md, "Device ID", is the specification.
public struct DeviceID: Hashable, Comparable, Sendable, CustomStringConvertible, LosslessStringConvertible, Codable {
    /// Characters in the text form without separators: 4 × (13 + 1).
    public static let characterCount = 56
    package static let groupCount = 4
    package static let groupDataLength = 13
    package static let blockLength = 7

    public let hash: Hash256

    public init(hash: Hash256) {
        self.hash = hash
    }

    /// The ID of the device whose static public key this is (32 bytes for X25519).
    public init(publicKey: some Collection<UInt8>) {
        hash = Blake2b.hash(Array(publicKey))
    }

    /// Whether `publicKey` (e.g. the static key a Noise handshake authenticated)
    /// belongs to this ID. This is the check that makes discovery spoof-proof.
    public func matches(publicKey: some Collection<UInt8>) -> Bool {
        DeviceID(publicKey: publicKey) == self
    }

    /// Parses the text form. Case-insensitive; dashes and white space anywhere
    /// are ignored, so "zmxvcyh 4d57al7 ..." and the compact 56-character form work.
    /// Look-alike digits (0, 1, 8, 9) are rejected, not guessed at: a device ID
    /// decides whom we trust, so we never "correct" one silently.
    public init(parsing text: some StringProtocol) throws(DeviceIDError) {
        var values = [UInt8]()
        values.reserveCapacity(Self.characterCount)
        var significant = 0
        for (offset, scalar) in text.unicodeScalars.enumerated() {
            if scalar == "-" || scalar.properties.isWhitespace { continue }
            significant += 1
            // Stop collecting (not reading) once the length is certainly wrong,
            // so a pasted novel costs no memory.
            guard significant <= Self.characterCount else { continue }
            guard scalar.isASCII, let value = Base32.value(of: Self.upperCased(UInt8(scalar.value))) else {
                throw .invalidCharacter(Character(scalar), position: offset + 1)
            }
            values.append(value)
        }
        guard significant == Self.characterCount else { throw .wrongLength(significant) }

        var data = [UInt8]()
        data.reserveCapacity(Self.groupCount * Self.groupDataLength)
        for group in 0..<Self.groupCount {
            let start = group * (Self.groupDataLength + 1)
            let groupData = values[start..<start + Self.groupDataLength]
            let check = values[start + Self.groupDataLength]
            guard Base32.value(of: LuhnBase32.checkCharacter(for: groupData)) == check else {
                throw .checkCharacterMismatch(group: group + 1)
            }
            data.append(contentsOf: groupData)
        }
        guard let bytes = Base32.decode(values: data), let hash = Hash256(bytes: bytes) else {
            throw .nonCanonical
        }
        self.hash = hash
    }

    private static func upperCased(_ ascii: UInt8) -> UInt8 {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(ascii) ? ascii - 0x20 : ascii
    }

    public init?(_ description: String) {
        guard let parsed = try? DeviceID(parsing: description) else { return nil }
        self = parsed
    }

    /// The 56 characters without separators (e.g. for a DNS-SD TXT record).
    public var compactForm: String {
        let data = Base32.encode(hash.bytes)
        var out = [UInt8]()
        out.reserveCapacity(Self.characterCount)
        for group in 0..<Self.groupCount {
            let groupData = data[group * Self.groupDataLength..<(group + 1) * Self.groupDataLength]
            out.append(contentsOf: groupData)
            // Alphabet characters always map back to a value.
            out.append(LuhnBase32.checkCharacter(for: groupData.map { Base32.value(of: $0) ?? 0 }))
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The canonical display form: 8 blocks of 7 characters joined by `-`.
    public var description: String {
        let compact = Array(compactForm.utf8)
        var out = [UInt8]()
        out.reserveCapacity(Self.characterCount + Self.characterCount / Self.blockLength - 1)
        for (index, character) in compact.enumerated() {
            if index > 0, index % Self.blockLength == 0 { out.append(UInt8(ascii: "-")) }
            out.append(character)
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The first block, for places with no room for the whole ID (peer lists,
    /// progress lines). Never use it to decide trust: 35 bits are guessable.
    public var shortForm: String { String(compactForm.prefix(Self.blockLength)) }

    public static func < (lhs: DeviceID, rhs: DeviceID) -> Bool { lhs.hash < rhs.hash }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        do {
            self = try DeviceID(parsing: text)
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.description))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
