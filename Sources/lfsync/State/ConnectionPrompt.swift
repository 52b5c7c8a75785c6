import Foundation
import LocalFirstSync
import LFSyncSystem
import LFSyncCrypto
import LFSyncContent
import LFSyncStore
import LFSyncTransport
import LFSyncTCP
import LFSyncDiscovery

/// What `serve` tells a person about a device that asks to connect.
///
/// The name comes from the device itself and proves nothing; only the Device
/// ID, proven by the handshake, does. So the question shows the whole ID (a
/// short one is easy to imitate), says plainly when the device is not a
/// trusted one, and warns loudly when it borrows a trusted device's name —
/// the one case where a person would otherwise say yes without thinking.
struct ConnectionPrompt {
    let peer: Peer
    let config: DeviceConfig

    /// The trusted device whose name this (different) device claims, if any.
    var impersonated: DeviceConfig.TrustedPeer? {
        guard config.trusted(peer.deviceID) == nil else { return nil }
        let claimed = Self.comparable(peer.name)
        return config.peers.first { Self.comparable($0.name) == claimed && !claimed.isEmpty }
    }

    /// The question, without the answer hint the prompter adds.
    var question: String {
        var lines: [String]
        if let trusted = config.trusted(peer.deviceID) {
            lines = ["Trusted device \"\(trusted.name)\" wants to connect (it calls itself \"\(peer.name)\").",
                     "  Device ID: \(peer.deviceID)"]
        } else {
            lines = ["An unknown device wants to connect: it is not one of this device's trusted devices.",
                     "  It calls itself: \"\(peer.name)\"",
                     "  Its Device ID:   \(peer.deviceID)"]
        }
        if let trusted = impersonated {
            lines.append("WARNING: this device calls itself \"\(peer.name)\", the name of a trusted device, but its Device ID is different"
                + " (the trusted \"\(trusted.name)\" is \(trusted.deviceID)). Say no unless you know why.")
        }
        lines.append("Accept?")
        return lines.joined(separator: "\n")
    }

    /// One log line, for when nobody can be asked.
    var summary: String {
        var line = "unknown device \"\(peer.name)\" (\(peer.deviceID))"
        if let trusted = impersonated { line += ", which claims the name of trusted device \"\(trusted.name)\" (\(trusted.deviceID))" }
        return line
    }

    /// Names compared as a person reads them: letter case, compatibility forms
    /// (fullwidth letters, ligatures), invisible format characters (zero-width
    /// spaces and joiners), any kind or run of spaces, and curly apostrophes do
    /// not make "Alice’s\u{200B} phone" another device's name.
    static func comparable(_ name: String) -> String {
        var out = ""
        var pendingSpace = false
        for scalar in name.precomposedStringWithCompatibilityMapping.lowercased().unicodeScalars {
            if scalar.properties.generalCategory == .format { continue }
            if scalar.properties.isWhitespace {
                pendingSpace = !out.isEmpty
                continue
            }
            if pendingSpace { out.append(" ") }
            pendingSpace = false
            switch scalar {
            case "\u{2018}", "\u{2019}", "\u{02BC}", "\u{FF07}": out.append("'")
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
