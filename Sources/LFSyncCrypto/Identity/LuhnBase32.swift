/// The Luhn mod N algorithm over the base32 alphabet (N = 32), as described
/// for "Luhn mod N" generally: walking from the rightmost character leftwards,
/// every other code point (starting with the rightmost) is doubled and its two
/// base-32 "digits" summed; the check character makes the total ≡ 0 (mod 32).
///
/// Why this works for typos: with N even, doubling-and-folding maps 0..<32
/// one-to-one onto 0..<32, so changing any single character changes the sum
/// and is always detected; most swaps of adjacent characters are caught too.
/// (Syncthing uses a left-to-right variant; ours is the textbook direction and
/// is specified byte for byte in PROTOCOL.md, "Device ID".)
enum LuhnBase32 {
    /// The check character (an alphabet byte) for `values` (5-bit code points).
    package static func checkCharacter(for values: some BidirectionalCollection<UInt8>) -> UInt8 {
        var factor: UInt32 = 2
        var sum: UInt32 = 0
        for value in values.reversed() {
            let product = factor * UInt32(value)
            sum += product / 32 + product % 32
            factor = factor == 2 ? 1 : 2
        }
        return Base32.alphabet[Int((32 - sum % 32) % 32)]
    }
}
