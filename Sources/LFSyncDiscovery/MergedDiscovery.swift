import Synchronization
import LFSyncSystem

/// Several discovery mechanisms as one, typically DNS-SD plus static peers:
/// when avahi is missing, the merged stream carries DNS-SD's `.unavailable`
/// and goes on reporting the static peers.
///
/// The merged stream finishes only when every member's stream has finished.
/// Instance names are not de-duplicated across members (a DNS-SD name and a
/// static `host:port` never collide in practice; the engine matches peers by
/// device ID after the handshake anyway).
package struct MergedDiscovery: Discovery {
    public let members: [any Discovery]

    public init(_ members: [any Discovery]) {
        self.members = members
    }

    public func events() -> AsyncStream<DiscoveryEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: DiscoveryEvent.self)
        guard !members.isEmpty else {
            continuation.finish()
            return stream
        }
        let running = RunningCount(members.count)
        let forwarders = members.map { member in
            Task {
                for await event in member.events() {
                    continuation.yield(event)
                }
                if running.decrementReachesZero() { continuation.finish() }
            }
        }
        // Cancelling a forwarder ends its member stream, which releases that stream's resources.
        continuation.onTermination = { _ in
            for forwarder in forwarders { forwarder.cancel() }
        }
        return stream
    }

    /// Advertises through every member that can. Members that cannot advertise
    /// at all (static) are skipped; if no member succeeds, the first real error
    /// is thrown. A member that is merely unavailable (no avahi) does not stop
    /// the others; its stream reports `.unavailable`.
    public func advertise(_ advertisement: ServiceAdvertisement) async throws(DiscoveryError) -> any AdvertisementHandle {
        var handles: [any AdvertisementHandle] = []
        var firstError: DiscoveryError?
        for member in members {
            do {
                handles.append(try await member.advertise(advertisement))
            } catch {
                if case .unsupported = error { continue }
                if firstError == nil { firstError = error }
            }
        }
        guard let first = handles.first else {
            throw firstError ?? .unsupported("no member of this discovery can advertise")
        }
        return MergedAdvertisementHandle(
            advertisement: advertisement, registeredName: first.registeredName, handles: handles)
    }
}

/// How many member streams are still running.
private final class RunningCount: Sendable {
    private let count: LockedState<Int>

    init(_ count: Int) {
        self.count = LockedState(count)
    }

    func decrementReachesZero() -> Bool {
        count.withLock { count in
            count -= 1
            return count == 0
        }
    }
}
