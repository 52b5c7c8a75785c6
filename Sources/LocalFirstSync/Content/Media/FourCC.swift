/// A four-character code: the type of an ISOBMFF box, a handler or item type.
///
/// Compared as the raw big-endian `UInt32` so parsing never has to build strings.
struct FourCC: Hashable, Sendable, CustomStringConvertible {
    let rawValue: UInt32

    init(rawValue: UInt32) {
        self.rawValue = rawValue
    }

    /// For the constants below only; `text` must be exactly four ASCII characters.
    init(_ text: StaticString) {
        precondition(text.utf8CodeUnitCount == 4, "a FourCC has four characters")
        var value: UInt32 = 0
        text.withUTF8Buffer { buffer in
            for byte in buffer { value = value << 8 | UInt32(byte) }
        }
        rawValue = value
    }

    var description: String {
        let bytes = (0..<4).map { UInt8(truncatingIfNeeded: rawValue >> (24 - 8 * $0)) }
        if bytes.allSatisfy({ (0x20...0x7E).contains($0) }) {
            return String(decoding: bytes, as: UTF8.self)
        }
        return "0x" + String(rawValue, radix: 16)
    }

    // Box and code types this reader looks at.
    static let ftyp = FourCC("ftyp")
    static let meta = FourCC("meta")
    static let moov = FourCC("moov")
    static let mdat = FourCC("mdat")
    static let hdlr = FourCC("hdlr")
    static let iinf = FourCC("iinf")
    static let infe = FourCC("infe")
    static let iloc = FourCC("iloc")
    static let idat = FourCC("idat")
    static let keys = FourCC("keys")
    static let ilst = FourCC("ilst")
    static let data = FourCC("data")
    static let mdta = FourCC("mdta")
    static let exif = FourCC("Exif")
    static let uuid = FourCC("uuid")

    /// Box types that can open a QuickTime or ISOBMFF file; used to sniff the format.
    static let plausibleFirstBoxes: Set<FourCC> = [
        ftyp, moov, mdat, meta, uuid,
        FourCC("free"), FourCC("skip"), FourCC("wide"), FourCC("pnot"), FourCC("styp"), FourCC("junk"),
    ]

    /// Child types that open a `meta` box; seeing one right after the header
    /// means a QuickTime-style `meta` without version/flags.
    static let plausibleMetaChildren: Set<FourCC> = [
        hdlr, keys, ilst, iinf, iloc, idat, FourCC("pitm"), FourCC("dinf"), FourCC("iprp"), FourCC("iref"),
        FourCC("mhdr"), FourCC("free"),
    ]
}
