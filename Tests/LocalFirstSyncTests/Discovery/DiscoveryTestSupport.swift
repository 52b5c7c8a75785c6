import Foundation
@testable import LocalFirstSync
@testable import LFSyncDiscovery

/// Helpers shared by the discovery suites.
enum DiscoveryTestSupport {
    /// The first `count` events of `stream`, or nil if they do not all arrive within `limit`.
    static func firstEvents(
        _ stream: AsyncStream<DiscoveryEvent>, count: Int, within limit: Duration = .seconds(10)
    ) async -> [DiscoveryEvent]? {
        await withTaskGroup(of: Optional<Array<DiscoveryEvent>>.self) { group in
            group.addTask {
                var events: [DiscoveryEvent] = []
                guard count > 0 else { return events }
                for await event in stream {
                    events.append(event)
                    if events.count == count { return events }
                }
                return events  // finished early: fewer than asked for
            }
            group.addTask {
                try? await Task.sleep(for: limit)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// Everything `stream` yields until it finishes, or nil if it is still open after `limit`.
    static func allEvents(_ stream: AsyncStream<DiscoveryEvent>, within limit: Duration = .seconds(10)) async -> [DiscoveryEvent]? {
        await firstEvents(stream, count: Int.max, within: limit)
    }

    static func advertisement(
        _ name: String, port: UInt16 = 7000, deviceID: String, version: UInt16 = 1
    ) -> ServiceAdvertisement {
        ServiceAdvertisement(instanceName: name, port: port, deviceID: deviceID, protocolVersion: version)
    }

    /// Whether an avahi-daemon runs in this mount namespace (its pid file names a live process).
    static var avahiDaemonIsRunning: Bool {
        guard let text = try? String(contentsOfFile: "/run/avahi-daemon/pid", encoding: .utf8),
              let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines))
        else { return false }
        return kill(pid, 0) == 0
    }
}

/// A deterministic byte generator for the TXT fuzz test.
struct DiscoveryFuzzGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }

    mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8(truncatingIfNeeded: next()) }
    }
}
