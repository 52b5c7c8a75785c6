/// A Noise handshake pattern (spec §7): pre-messages plus the token sequence
/// of each handshake message, as data interpreted by `NoiseHandshake`.
///
/// Only the spec's fundamental patterns are offered, through the static
/// members and `init?(name:)`; arbitrary token lists are not accepted because
/// an ill-formed pattern (spec §7.3) can silently lose security properties.
package struct NoisePattern: Sendable, Hashable, CustomStringConvertible {
    /// A handshake token. DH tokens name the initiator's key first:
    /// `es` = initiator ephemeral with responder static.
    package enum Token: String, Sendable, Hashable {
        case e, s, ee, es, se, ss
    }

    /// The pattern part of a protocol name, e.g. "XX".
    package let name: String
    /// Keys the responder knows before the handshake (`-> s ...`), e.g. KK's initiator static.
    package let initiatorPreMessage: [Token]
    /// Keys the initiator knows before the handshake (`<- s ...`), e.g. NK's responder static.
    package let responderPreMessage: [Token]
    /// Handshake messages in order; even indices are sent by the initiator.
    package let messages: [[Token]]

    /// One-way patterns (N, K, X) are a single initiator message with no
    /// reply: the responder may only receive, before and after the handshake.
    package var isOneWay: Bool { messages.count == 1 }

    /// The full name this library speaks, e.g. `Noise_XX_25519_ChaChaPoly_BLAKE2b`.
    /// It seeds the transcript hash, so both sides must agree on it exactly.
    package var protocolName: String { protocolName(cipher: .chaChaPoly) }

    /// The full name with `cipher`, e.g. `Noise_XX_25519_AESGCM_BLAKE2b`.
    package func protocolName(cipher: NoiseCipher) -> String { "Noise_\(name)_25519_\(cipher.name)_BLAKE2b" }

    package var description: String {
        func render(_ tokens: [Token]) -> String { tokens.map(\.rawValue).joined(separator: ", ") }
        var lines = [name + ":"]
        if !initiatorPreMessage.isEmpty { lines.append("  -> " + render(initiatorPreMessage)) }
        if !responderPreMessage.isEmpty { lines.append("  <- " + render(responderPreMessage)) }
        if !initiatorPreMessage.isEmpty || !responderPreMessage.isEmpty { lines.append("  ...") }
        for (index, message) in messages.enumerated() {
            lines.append((index % 2 == 0 ? "  -> " : "  <- ") + render(message))
        }
        return lines.joined(separator: "\n")
    }

    private init(_ name: String, initiator: [Token] = [], responder: [Token] = [], _ messages: [Token]...) {
        self.name = name
        initiatorPreMessage = initiator
        responderPreMessage = responder
        self.messages = messages
    }

    /// Looks a pattern up by the pattern part of a protocol name ("XX", "IK").
    package init?(name: String) {
        guard let pattern = Self.all.first(where: { $0.name == name }) else { return nil }
        self = pattern
    }

    /// Parses a full protocol name; nil unless it is `Noise_<pattern>` with
    /// exactly this library's suite (`_25519_ChaChaPoly_BLAKE2b`).
    package init?(protocolName: String) {
        let prefix = "Noise_"
        guard protocolName.hasPrefix(prefix), protocolName.hasSuffix(Noise.suiteSuffix),
              protocolName.count > prefix.count + Noise.suiteSuffix.count
        else { return nil }
        let name = protocolName.dropFirst(prefix.count).dropLast(Noise.suiteSuffix.count)
        self.init(name: String(name))
    }

    // One-way patterns (spec §7.4).
    package static let n = NoisePattern("N", responder: [.s], [.e, .es])
    package static let k = NoisePattern("K", initiator: [.s], responder: [.s], [.e, .es, .ss])
    package static let x = NoisePattern("X", responder: [.s], [.e, .es, .s, .ss])

    // Interactive fundamental patterns (spec §7.5).
    package static let nn = NoisePattern("NN", [.e], [.e, .ee])
    package static let nk = NoisePattern("NK", responder: [.s], [.e, .es], [.e, .ee])
    package static let nx = NoisePattern("NX", [.e], [.e, .ee, .s, .es])
    package static let xn = NoisePattern("XN", [.e], [.e, .ee], [.s, .se])
    package static let xk = NoisePattern("XK", responder: [.s], [.e, .es], [.e, .ee], [.s, .se])
    package static let xx = NoisePattern("XX", [.e], [.e, .ee, .s, .es], [.s, .se])
    package static let kn = NoisePattern("KN", initiator: [.s], [.e], [.e, .ee, .se])
    package static let kk = NoisePattern("KK", initiator: [.s], responder: [.s], [.e, .es, .ss], [.e, .ee, .se])
    package static let kx = NoisePattern("KX", initiator: [.s], [.e], [.e, .ee, .se, .s, .es])
    package static let `in` = NoisePattern("IN", [.e, .s], [.e, .ee, .se])
    package static let ik = NoisePattern("IK", responder: [.s], [.e, .es, .s, .ss], [.e, .ee, .se])
    package static let ix = NoisePattern("IX", [.e, .s], [.e, .ee, .se, .s, .es])

    /// Every pattern this library implements.
    package static let all: [NoisePattern] = [
        .n, .k, .x, .nn, .nk, .nx, .xn, .xk, .xx, .kn, .kk, .kx, .in, .ik, .ix,
    ]
}

extension NoisePattern.Token {
    /// For DH tokens, whether each side's half is its static key:
    /// (initiator's key, responder's key). Nil for `e` and `s`.
    package var dhUsesStatic: (initiator: Bool, responder: Bool)? {
        switch self {
        case .e, .s: nil
        case .ee: (false, false)
        case .es: (false, true)
        case .se: (true, false)
        case .ss: (true, true)
        }
    }
}

extension NoisePattern {
    /// Who sends handshake message `index`.
    package func sender(ofMessage index: Int) -> NoiseHandshake.Role {
        index % 2 == 0 ? .initiator : .responder
    }

    /// Whether `role`'s static key appears anywhere in the pattern — as a
    /// pre-message, a transmitted `s`, or one half of a DH — and must
    /// therefore be supplied.
    package func usesStaticKey(of role: NoiseHandshake.Role) -> Bool {
        let preMessage = role == .initiator ? initiatorPreMessage : responderPreMessage
        if preMessage.contains(.s) { return true }
        for (index, tokens) in messages.enumerated() {
            if sender(ofMessage: index) == role, tokens.contains(.s) { return true }
            for token in tokens {
                guard let halves = token.dhUsesStatic else { continue }
                if role == .initiator ? halves.initiator : halves.responder { return true }
            }
        }
        return false
    }
}
