/// Why a text was not accepted as a device ID; the descriptions are written
/// for the person who typed it.
public enum DeviceIDError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Not 56 characters once dashes and spaces are removed.
    case wrongLength(Int)
    /// A character outside A–Z, 2–7 (case-insensitive); `position` counts
    /// characters of the input from 1, separators included.
    case invalidCharacter(Character, position: Int)
    /// Group 1...4 (blocks 2g-1 and 2g) does not match its check character.
    case checkCharacterMismatch(group: Int)
    /// Check characters match, but the padding bits of the base32 text are not
    /// zero: this is not the encoding of any ID.
    case nonCanonical

    public var description: String {
        switch self {
        case let .wrongLength(count):
            "a device ID has \(DeviceID.characterCount) characters (8 blocks of 7, dashes optional), got \(count)"
        case let .invalidCharacter(character, position):
            "invalid character '\(character.unicodeScalars.map { $0.escaped(asASCII: true) }.joined())' at position \(position) "
                + "(device IDs use only A–Z and 2–7)" + Self.hint(for: character)
        case let .checkCharacterMismatch(group):
            "check character mismatch in group \(group) (blocks \(2 * group - 1)–\(2 * group)): probably a typo"
        case .nonCanonical:
            "not a valid device ID (its last block encodes bits no ID has): probably a typo"
        }
    }

    private static func hint(for character: Character) -> String {
        switch character {
        case "0": "; did you mean the letter O?"
        case "1": "; did you mean the letter I?"
        case "8": "; did you mean the letter B?"
        default: ""
        }
    }
}
