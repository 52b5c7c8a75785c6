/// A Noise handshake pattern (spec §7): pre-messages plus the token sequence
/// of each handshake message, as data interpreted by `NoiseHandshake`.
///
/// Only the spec's fundamental patterns are offered, through the static
/// members and `init?(name:)`; arbitrary token lists are not accepted because
/// an ill-formed pattern (spec §7.3) can silently lose security properties.
public struct NoisePattern: Sendable, Hashable, CustomStringConvertible {
    /// A handshake token. DH tokens name the initiator's key first:
    /// `es` = initiator ephemeral with responder static.
    public enum Token: String, Sendable, Hashable {
        case e, s, ee, es, se, ss
    }

    /// The pattern part of a protocol name, e.g. "XX".
    public let name: String
    /// Keys the responder knows before the handshake (`-> s ...`), e.g. KK's initiator static.
    public let initiatorPreMessage: [Token]
    /// Keys the initiator knows before the handshake (`<- s ...`), e.g. NK's responder static.
    public let responderPreMessage: [Token]
    /// Handshake messages in order; even indices are sent by the initiator.
    public let messages: [[Token]]

    /// One-way patterns (N, K, X) are a single initiator message with no
    /// reply: the responder may only receive, before and after the handshake.
    public var isOneWay: Bool { messages.count == 1 }

    /// The full name this library speaks, e.g. `Noise_XX_25519_ChaChaPoly_BLAKE2b`.
    /// It seeds the transcript hash, so both sides must agree on it exactly.
    public var protocolName: String { protocolName(cipher: .chaChaPoly) }

    /// The full name with `cipher`, e.g. `Noise_XX_25519_AESGCM_BLAKE2b`.
    public func protocolName(cipher: NoiseCipher) -> String { "Noise_\(name)_25519_\(cipher.name)_BLAKE2b" }

    public var description: String {
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
    public init?(name: String) {
        guard let pattern = Self.all.first(where: { $0.name == name }) else { return nil }
        self = pattern
    }

    /// Parses a full protocol name; nil unless it is `Noise_<pattern>` with
    /// exactly this library's suite (`_25519_ChaChaPoly_BLAKE2b`).
    public init?(protocolName: String) {
        let prefix = "Noise_"
        guard protocolName.hasPrefix(prefix), protocolName.hasSuffix(Noise.suiteSuffix),
              protocolName.count > prefix.count + Noise.suiteSuffix.count
        else { return nil }
        let name = protocolName.dropFirst(prefix.count).dropLast(Noise.suiteSuffix.count)
        self.init(name: String(name))
    }

    // One-way patterns (spec §7.4).
    public static let n = NoisePattern("N", responder: [.s], [.e, .es])
    public static let k = NoisePattern("K", initiator: [.s], responder: [.s], [.e, .es, .ss])
    public static let x = NoisePattern("X", responder: [.s], [.e, .es, .s, .ss])

    // Interactive fundamental patterns (spec §7.5).
    public static let nn = NoisePattern("NN", [.e], [.e, .ee])
    public static let nk = NoisePattern("NK", responder: [.s], [.e, .es], [.e, .ee])
    public static let nx = NoisePattern("NX", [.e], [.e, .ee, .s, .es])
    public static let xn = NoisePattern("XN", [.e], [.e, .ee], [.s, .se])
    public static let xk = NoisePattern("XK", responder: [.s], [.e, .es], [.e, .ee], [.s, .se])
    public static let xx = NoisePattern("XX", [.e], [.e, .ee, .s, .es], [.s, .se])
    public static let kn = NoisePattern("KN", initiator: [.s], [.e], [.e, .ee, .se])
    public static let kk = NoisePattern("KK", initiator: [.s], responder: [.s], [.e, .es, .ss], [.e, .ee, .se])
    public static let kx = NoisePattern("KX", initiator: [.s], [.e], [.e, .ee, .se, .s, .es])
    public static let `in` = NoisePattern("IN", [.e, .s], [.e, .ee, .se])
    public static let ik = NoisePattern("IK", responder: [.s], [.e, .es, .s, .ss], [.e, .ee, .se])
    public static let ix = NoisePattern("IX", [.e, .s], [.e, .ee, .se, .s, .es])

    /// Every pattern this library implements.
    public static let all: [NoisePattern] = [
        .n, .k, .x, .nn, .nk, .nx, .xn, .xk, .xx, .kn, .kk, .kx, .in, .ik, .ix,
    ]
}

extension NoisePattern.Token {
    /// For DH tokens, whether each side's half is its static key:
    /// (initiator's key, responder's key). Nil for `e` and `s`.
    var dhUsesStatic: (initiator: Bool, responder: Bool)? {
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
    func sender(ofMessage index: Int) -> NoiseHandshake.Role {
        index % 2 == 0 ? .initiator : .responder
    }

    /// Whether `role`'s static key appears anywhere in the pattern — as a
    /// pre-message, a transmitted `s`, or one half of a DH — and must
    /// therefore be supplied.
    func usesStaticKey(of role: NoiseHandshake.Role) -> Bool {
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
