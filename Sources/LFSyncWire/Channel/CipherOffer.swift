import LFSyncCrypto

/// The two cleartext messages that open every connection, before the Noise
/// handshake (PROTOCOL.md, "Cipher choice"): the initiator's offer — the
/// protocol tag and one bit per cipher it can use — and the responder's
/// choice, one cipher ID. Both become the handshake's prologue, so a meddler
/// who rewrites either (to force the slower cipher, say) fails the handshake.
enum CipherOffer {
    package static let offerLength = SecureChannel.protocolTag.count + 1

    package static func encode(_ ciphers: [NoiseCipher]) -> [UInt8] {
        SecureChannel.protocolTag + [ciphers.reduce(UInt8(0)) { $0 | bit($1) }]
    }

    /// The responder's side: the first of `preferred` that the offer lists.
    package static func choose(from offer: [UInt8], preferring preferred: [NoiseCipher]) throws(SecureChannelError) -> NoiseCipher {
        guard offer.count == offerLength, Array(offer.prefix(SecureChannel.protocolTag.count)) == SecureChannel.protocolTag else {
            throw .incompatiblePeer("its opening is not an lfsync/2 cipher offer")
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

    private static func bit(_ cipher: NoiseCipher) -> UInt8 { 1 << (cipher.rawValue - 1) }
}
