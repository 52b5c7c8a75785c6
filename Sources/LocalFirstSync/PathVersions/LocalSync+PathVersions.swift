import LFSyncContent
import LFSyncStore
import LFSyncSystem
import LFSyncWire

/// Path versions (PROTOCOL.md, "Path versions" and "Syncing"): asking a peer for its path
/// states, asking it to sync with this device, and answering both.
extension LocalSync {
    /// Lets devices allowed to pull read this device's path versions.
    package func servePathStates(_ handler: @escaping @Sendable (Peer, WireMessage.PathStateRequest) async -> WireMessage.PathStateReport) {
        pathStateServer = handler
    }

    /// Applies sync requests from devices trusted to push unasked (`TrustPolicy.Entry.acceptsOffers`).
    package func serveSyncRequests(_ handler: @escaping @Sendable (Peer, WireMessage.SyncRequest) async -> WireMessage.SyncReply) {
        syncServer = handler
    }

    /// Whether `peer` (connected) keeps path versions.
    package func keepsPathVersions(_ peer: Peer) async -> Bool {
        guard let session = session(for: peer) else { return false }
        return await session.channel.peerCapabilities.contains(.pathVersions)
    }

    /// Asks `peer` to sync with this device now, answering its path state and chunk
    /// requests from `source` until it replies.
    package func requestSync(
        _ flags: WireMessage.SyncRequest.Flags, maxDeletions: UInt32 = WireMessage.SyncRequest.unlimited, with peer: Peer,
        answeringFrom source: SyncSource, timeout: Duration = .seconds(24 * 3600), idleLimit: Duration = .seconds(300)
    ) async throws(SyncError) -> WireMessage.SyncReply {
        guard let session = session(for: peer) else { throw .notConnected(peer.deviceID) }
        guard await session.channel.peerCapabilities.contains(.pathVersions) else {
            throw .declined(reason: "\(peer) does not keep path versions (an older lfsync)")
        }
        let requestID = UInt64.random(in: 1...UInt64.max)
        // A receiver at work asks for path states and chunks; one that asks nothing and answers
        // nothing for `idleLimit` is given up on, however long the whole sync may take.
        let activity = SyncActivity(clock: configuration.clock)
        let watched = SyncSource(
            pathStates: { request in
                activity.touch()
                return await source.pathStates(request)
            },
            chunk: { hash, length in
                activity.touch()
                return await source.chunk(hash, length)
            })
        invitations[peer.deviceID, default: [:]][requestID] = watched
        defer {
            invitations[peer.deviceID]?[requestID] = nil
            if invitations[peer.deviceID]?.isEmpty == true { invitations[peer.deviceID] = nil }
        }
        let queries = session.queries
        let message = WireMessage.syncRequest(.init(requestID: requestID, flags: flags, maxDeletions: maxDeletions))
        let result: Result<WireMessage, SyncError> = await withTaskGroup(of: Result<WireMessage, SyncError>?.self) { group in
            group.addTask {
                do throws(SyncError) { return .success(try await queries.ask(message, requestID: requestID, timeout: timeout)) } catch { return .failure(error) }
            }
            group.addTask {
                while await activity.idle() < idleLimit {
                    do { try await activity.clock.sleep(for: .seconds(5)) } catch { return nil }
                }
                return .failure(.timedOut("\(peer) did nothing for the sync it was asked for in \(idleLimit)"))
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? .failure(.cancelled)
        }
        let reply = try result.get()
        guard case let .syncReply(answer) = reply else { throw .protocolViolation("\(reply.type) in answer to a SyncRequest") }
        return answer
    }

    /// One report of `peer`'s path versions after `position` (from its start when nil, or
    /// when its history is another one now).
    package func pathStates(from peer: Peer, after position: HistoryPosition?, timeout: Duration = .seconds(300)) async throws(SyncError) -> WireMessage.PathStateReport {
        guard let session = session(for: peer) else { throw .notConnected(peer.deviceID) }
        guard await session.channel.peerCapabilities.contains(.pathVersions) else {
            throw .declined(reason: "\(peer) does not keep path versions (an older lfsync)")
        }
        let requestID = UInt64.random(in: 1...UInt64.max)
        let request = WireMessage.PathStateRequest(requestID: requestID, historyID: position?.historyID ?? 0, since: position?.seq ?? 0)
        let reply = try await session.queries.ask(.pathStateRequest(request), requestID: requestID, timeout: timeout)
        guard case let .pathStateReport(report) = reply else { throw .protocolViolation("\(reply.type) in answer to a PathStateRequest") }
        guard report.status == .answered else {
            throw .declined(reason: "\(peer) does not let this device read its library (not asked to sync, nor allowed to pull)")
        }
        return report
    }

    /// A path state request: answered to a device this one asked to sync, or one allowed to pull.
    func answerPathStateRequest(_ request: WireMessage.PathStateRequest, from peer: Peer) async -> WireMessage.PathStateReport {
        if let source = invitations[peer.deviceID]?.values.first { return await source.pathStates(request) }
        guard trust.mayPull(peer.deviceID), let server = pathStateServer else {
            if let line = refusalLog.note("refused a path state request from \(peer): not allowed to pull") { configuration.log(line) }
            return .refused(request.requestID)
        }
        return await server(peer, request)
    }

    /// A sync request: applied only for a device trusted to push unasked — a sync changes
    /// files in place, which no person is asked about one by one.
    func answerSyncRequest(_ request: WireMessage.SyncRequest, from peer: Peer) async -> WireMessage.SyncReply {
        guard trust.acceptsOffers(from: peer.deviceID) else {
            return .init(requestID: request.requestID, status: .declined,
                         reason: "this device takes syncs only from devices it accepts pushes from unasked ('lfsync trust ID --auto-accept')")
        }
        guard let server = syncServer else {
            return .init(requestID: request.requestID, status: .failed, reason: "this device has no library to sync (it only sends)")
        }
        return await server(peer, request)
    }
}

/// When the receiver of a sync request last asked for something.
final class SyncActivity: Sendable {
    let clock: any Clock<Duration>
    private let last: LockedState<Duration>
    private let start: ContinuousClock.Instant

    init(clock: any Clock<Duration>) {
        self.clock = clock
        start = .now
        last = LockedState(.zero)
    }

    func touch() { last.withLock { $0 = ContinuousClock.now - start } }

    /// How long nothing was asked.
    func idle() async -> Duration { (ContinuousClock.now - start) - last.withLock { $0 } }
}
