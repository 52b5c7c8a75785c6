/// A four-character code: the type of an ISOBMFF box, a handler or item type.
///
/// Compared as the raw big-endian `UInt32` so parsing never has to build strings.
package struct FourCC: Hashable, Sendable, CustomStringConvertible {
    package let rawValue: UInt32

    package init(rawValue: UInt32) {
        self.rawValue = rawValue
    }

    /// For the constants below only; `text` must be exactly four ASCII characters.
    package init(_ text: StaticString) {
        precondition(text.utf8CodeUnitCount == 4, "a FourCC has four characters")
        var value: UInt32 = 0
        text.withUTF8Buffer { buffer in
            for byte in buffer { value = value << 8 | UInt32(byte) }
        }
        rawValue = value
    }

    package var description: String {
        let bytes = (0..<4).map { UInt8(truncatingIfNeeded: rawValue >> (24 - 8 * $0)) }
        if bytes.allSatisfy({ (0x20...0x7E).contains($0) }) {
            return String(decoding: bytes, as: UTF8.self)
        }
        return "0x" + String(rawValue, radix: 16)
    }

    // Box and code types this reader looks at.
    package static let ftyp = FourCC("ftyp")
    package static let meta = FourCC("meta")
    package static let moov = FourCC("moov")
    package static let mdat = FourCC("mdat")
    package static let hdlr = FourCC("hdlr")
    package static let iinf = FourCC("iinf")
    package static let infe = FourCC("infe")
    package static let iloc = FourCC("iloc")
    package static let idat = FourCC("idat")
    package static let keys = FourCC("keys")
    package static let ilst = FourCC("ilst")
    package static let data = FourCC("data")
    package static let mdta = FourCC("mdta")
    package static let exif = FourCC("Exif")
    package static let uuid = FourCC("uuid")

    /// Box types that can open a QuickTime or ISOBMFF file; used to sniff the format.
    package static let plausibleFirstBoxes: Set<FourCC> = [
        ftyp, moov, mdat, meta, uuid,
        FourCC("free"), FourCC("skip"), FourCC("wide"), FourCC("pnot"), FourCC("styp"), FourCC("junk"),
    ]

    /// Child types that open a `meta` box; seeing one right after the header
    /// means a QuickTime-style `meta` without version/flags.
    package static let plausibleMetaChildren: Set<FourCC> = [
        hdlr, keys, ilst, iinf, iloc, idat, FourCC("pitm"), FourCC("dinf"), FourCC("iprp"), FourCC("iref"),
        FourCC("mhdr"), FourCC("free"),
    ]
}
