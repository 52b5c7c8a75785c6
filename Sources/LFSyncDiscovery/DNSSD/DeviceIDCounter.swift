import Synchronization
import LFSyncSystem

/// The device IDs this object currently advertises, counted because the same
/// ID may be advertised twice (two ports, two names). Browsing consults it so
/// a device does not discover itself.
final class DeviceIDCounter: Sendable {
    private let counts = LockedState<[String: Int]>([:])

    package func insert(_ deviceID: String) {
        counts.withLock { $0[deviceID, default: 0] += 1 }
    }

    package func remove(_ deviceID: String) {
        counts.withLock { counts in
            guard let count = counts[deviceID] else { return }
            counts[deviceID] = count > 1 ? count - 1 : nil
        }
    }

    package func contains(_ deviceID: String) -> Bool {
        counts.withLock { $0[deviceID] != nil }
    }
}
