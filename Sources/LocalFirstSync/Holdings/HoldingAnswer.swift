import Foundation
import LFSyncWire

/// What a device said, and what this side made of it, when asked whether it holds a
/// content (`LocalSync.checkHolding`). Only `heldVerified` with `proven` (or without proof
/// asked for) counts as a copy.
package enum HoldingAnswer: Hashable, Sendable, CustomStringConvertible {
    /// It holds the content, its bytes matching their hashes at `at` (now, for a proof).
    /// `proven`: its proof matched the keyed hash of our own bytes.
    case heldVerified(at: Date?, proven: Bool)
    /// It had the content, but its files changed since (edited, or damaged on its disk).
    case heldChanged
    case notHeld
    /// It claimed the content, but its proof does not match our bytes: it does not hold
    /// them (or holds other bytes).
    case proofFailed
    /// We could not make the proof to compare with: our own copy changed or is unreadable.
    case unprovable(String)

    package var description: String {
        switch self {
        case let .heldVerified(_, proven): proven ? "held and verified (proven)" : "held and verified"
        case .heldChanged: "held but changed since"
        case .notHeld: "not held"
        case .proofFailed: "claimed, but its proof does not match"
        case let .unprovable(reason): "could not be checked: \(reason)"
        }
    }
}

/// How a device answers one holding check of a peer's.
enum HoldingResponse: Sendable {
    case answers([WireMessage.HoldingReport.Answer])
    /// The peer is not trusted here.
    case refused
    /// The check breaks a limit only the holder can see (the bytes its proofs would read):
    /// answered with Error 5, and the connection closed.
    case overLimit(String)
}
