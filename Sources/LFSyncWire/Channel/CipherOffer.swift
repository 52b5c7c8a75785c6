import LFSyncCrypto

/// The two cleartext messages that open every connection, before the Noise
/// handshake (PROTOCOL.md, "Cipher choice"): the initiator's offer — the
/// protocol tag and one bit per cipher it can use — and the responder's
/// choice, one cipher ID. Both become the handshake's prologue, so a meddler
/// who rewrites either (to force the slower cipher, say) fails the handshake.
enum CipherOffer {
    package static let offerLength = SecureChannel.protocolTag.count + 1

    /// `tag` is ours but for tests that play an lfsync of another version.
    package static func encode(_ ciphers: [NoiseCipher], tag: [UInt8] = SecureChannel.protocolTag) -> [UInt8] {
        tag + [ciphers.reduce(UInt8(0)) { $0 | bit($1) }]
    }

    /// The responder's side: the first of `preferred` that the offer lists.
    /// An offer from any lfsync version from 2 on is answered, not only our own: the
    /// handshake binds the offer as it was sent, and the Hellos that follow tell a peer
    /// of another version, with Error 1, why the two cannot talk. Closing on the tag
    /// alone would leave that peer with nothing but a dropped connection.
    package static func choose(from offer: [UInt8], preferring preferred: [NoiseCipher]) throws(SecureChannelError) -> NoiseCipher {
        guard offer.count == offerLength, offer.prefix(tagStem.count).elementsEqual(tagStem),
              let digit = offer.dropFirst(tagStem.count).first, (UInt8(ascii: "2")...UInt8(ascii: "9")).contains(digit)
        else {
            throw .incompatiblePeer("its opening is not an lfsync cipher offer")
        }
        let mask = offer[offer.count - 1]
        guard let cipher = preferred.first(where: { mask & bit($0) != 0 }) else {
            throw .incompatiblePeer("no cipher in common (offered mask \(mask))")
        }
        return cipher
    }

    /// The initiator's side: the responder's choice, which must be one we offered.
    package static func chosen(_ choice: [UInt8], offered: [NoiseCipher]) throws(SecureChannelError) -> NoiseCipher {
        guard choice.count == 1, let cipher = NoiseCipher(rawValue: choice[0]), offered.contains(cipher) else {
            throw .incompatiblePeer("it chose a cipher we did not offer")
        }
        return cipher
    }

    /// `lfsync/`, which the version digit follows.
    private static let tagStem = Array(SecureChannel.protocolTag.dropLast())

    private static func bit(_ cipher: NoiseCipher) -> UInt8 { 1 << (cipher.rawValue - 1) }
}
