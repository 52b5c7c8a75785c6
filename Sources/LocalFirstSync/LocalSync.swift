import Foundation
import Synchronization
import LFSyncContent
import LFSyncCrypto
import LFSyncDiscovery
import LFSyncStore
import LFSyncLanding
import LFSyncSystem
import LFSyncTCP
import LFSyncTransport
import LFSyncWire

/// The sync engine: every connected peer, consent, offers, chunk transfer,
/// receipts and the per-(content, peer) ledger.
///
/// One actor owns the set of sessions and the streams handed to the
/// application; each session consumes its own peer's messages in order. A
/// broadcast to several peers runs one send task per peer (each with the
/// channel's backpressure) over one shared reader, so each chunk is read and
/// verified once however many peers need it.
public actor LocalSync {
    public struct Configuration: Sendable {
        /// The name shown to other devices.
        public var deviceName: String
        /// Library that incoming offers land in; nil = this device only sends.
        public var library: URL?
        /// Chunk index of that library, so chunks we already have are copied locally.
        public var libraryChunkIndex: ChunkIndex?
        /// Scan cache of that library, so received files need no hashing at the next scan.
        public var libraryScanCache: ScanCache?
        /// The permission bits of what lands in that library (the source's, masked by the umask).
        public var newFileModes: NewFileModes
        public var trust: TrustPolicy
        /// The longest a receiver may take to answer (PROTOCOL.md, "Limits and deadlines"): senders wait a little longer.
        public static let longestDecisionTimeout: Duration = WireProtocol.consentTimeout
        /// How long a sender waits for an answer by default: a little longer than any receiver may take to say no.
        public static let defaultOfferReplyTimeout: Duration = WireProtocol.consentWait
        /// How long a person has to answer a connection request or an offer before it counts as
        /// declined; at most `longestDecisionTimeout`, which is what the other side waits for.
        public var decisionTimeout: Duration {
            get { storedDecisionTimeout }
            set { storedDecisionTimeout = min(newValue, WireProtocol.consentTimeout) }
        }
        private var storedDecisionTimeout: Duration
        /// How long the sender waits for a peer's answer to an offer (the peer's person
        /// included): by default `defaultOfferReplyTimeout`, a little longer than any receiver
        /// may take to say no.
        public var offerReplyTimeout: Duration
        /// Caps on the connections held at once (strangers get tighter ones).
        public var connectionLimits: ConnectionLimits
        /// One budget for everything this engine sends, over every connection (`--bwlimit`):
        /// two peers sharing it get about half each. nil sends as fast as the link allows.
        public var sendBudget: BandwidthBudget?
        /// The same for what it receives (`pull --bwlimit`): reading slower makes TCP slow the sender.
        public var receiveBudget: BandwidthBudget?
        /// The clock every engine deadline runs on (set-up, consent, offer replies, accept
        /// back-off): tests inject a manual one and advance it instead of sleeping.
        public var clock: any Clock<Duration>
        public var log: @Sendable (String) -> Void

        package init(
            deviceName: String, library: URL? = nil, libraryChunkIndex: ChunkIndex? = nil, libraryScanCache: ScanCache? = nil,
            newFileModes: NewFileModes = NewFileModes(), trust: TrustPolicy = TrustPolicy(),
            decisionTimeout: Duration = Configuration.longestDecisionTimeout, offerReplyTimeout: Duration = Configuration.defaultOfferReplyTimeout,
            connectionLimits: ConnectionLimits = ConnectionLimits(), sendBudget: BandwidthBudget? = nil, receiveBudget: BandwidthBudget? = nil,
            clock: any Clock<Duration> = ContinuousClock(), log: @escaping @Sendable (String) -> Void = { _ in }
        ) {
            self.deviceName = deviceName
            self.library = library
            self.libraryChunkIndex = libraryChunkIndex
            self.libraryScanCache = libraryScanCache
            self.newFileModes = newFileModes
            self.trust = trust
            storedDecisionTimeout = min(decisionTimeout, WireProtocol.consentTimeout)
            self.offerReplyTimeout = offerReplyTimeout
            self.connectionLimits = connectionLimits
            self.sendBudget = sendBudget
            self.receiveBudget = receiveBudget
            self.clock = clock
            self.log = log
        }
    }

    public let identity: DeviceIdentity
    public let store: SyncStateStore
    public nonisolated let serviceType: String
    public let configuration: Configuration
    /// The receiving library, readable without hopping onto the actor (sessions open it lazily).
    private nonisolated let receiveLibrary: (url: URL, chunkIndex: ChunkIndex?, scanCache: ScanCache?, modes: NewFileModes)?
    private let transport: any Transport
    private let discovery: any Discovery
    private var sessions: [DeviceID: PeerSession] = [:]
    /// Who holds which connection slot (see `ConnectionLimits`).
    private var admission: ConnectionAdmission
    private var tickets: [ObjectIdentifier: ConnectionAdmission.Ticket] = [:]
    /// Connections still shaking hands, by ticket: the admission may drop the oldest to make room.
    private var handshaking: [UInt64: any Connection] = [:]
    /// Failed handshakes come as fast as a stranger can open connections: one line per interval.
    private var handshakeFailureLog = RateLimitedLog(interval: .seconds(10))
    var refusalLog = RateLimitedLog(interval: .seconds(10))
    private var listener: (any Listener)?
    /// Every task this engine runs, as children of one group (`EngineTasks`).
    private let tasks = EngineTasks()
    private var advertisement: (any AdvertisementHandle)?
    private let offerIDs = OfferIDSource()
    private let connectionRequestStream = AsyncStream<ConnectionRequest>.makeStream(bufferingPolicy: .bufferingNewest(64))
    private let incomingTransferStream = AsyncStream<IncomingTransfer>.makeStream(bufferingPolicy: .bufferingNewest(256))
    private let preparation = AsyncStream<ScanProgress>.makeStream(bufferingPolicy: .bufferingNewest(1))
    /// Called when a trusted peer asks us to offer what it lacks.
    /// What this device is sending in answer to each device's Pulls and Fetches: cut off
    /// when that device loses the permission to pull (`updateTrust`).
    private var pullAnswers: [DeviceID: [OutgoingTransfer]] = [:]
    private var pullHandler: (@Sendable (Peer) async -> [Asset])?
    /// What each device this one asked to sync (`requestSync`) may read here meanwhile, by request.
    var invitations: [DeviceID: [UInt64: SyncSource]] = [:]
    /// Answers path state requests from devices allowed to pull (`servePathStates`).
    var pathStateServer: (@Sendable (Peer, WireMessage.PathStateRequest) async -> WireMessage.PathStateReport)?
    /// Applies a trusted device's sync requests (`serveSyncRequests`).
    var syncServer: (@Sendable (Peer, WireMessage.SyncRequest) async -> WireMessage.SyncReply)?
    private var pullLibrary: URL?
    /// Answers trusted devices' holding checks, once `serveHoldings` gave it a library.
    /// Answers holding checks, once `serveHoldings` set it up; read without the actor by the
    /// receiving side, which tells it when the library changed.
    private let holdings = LockedState<HoldingResponder?>(nil)
    /// Expected proofs of our own holding checks are made here.
    private let holdingDisk = BlockingQueue(label: "lfsync.holding-checks")
    /// The trust policy in force: `configuration.trust` until `updateTrust(_:)` replaces it.
    /// Sessions read it at each decision, so a change applies to connections already open.
    private let currentTrust: CurrentTrust

    /// - Parameters:
    ///   - serviceName: the DNS-SD service type this engine advertises and browses when no
    ///     `discovery` is given (`lfsync`, `_lfsync._tcp`, …; an invalid name falls back to
    ///     `_lfsync._tcp`). Apps that run side by side with lfsync pick their own.
    ///   - discovery: how peers are found; nil means DNS-SD through the local avahi-daemon
    ///     (without a daemon, `nearbyPeers()` reports `.unavailable` and advertising is skipped).
    public init(
        serviceName: String = "_lfsync._tcp", identity: DeviceIdentity, store: SyncStateStore,
        configuration: Configuration, transport: any Transport = TCPTransport(), discovery: (any Discovery)? = nil
    ) {
        let type = (try? DiscoveryServiceType(serviceName)) ?? .lfsync
        serviceType = type.description
        self.identity = identity
        self.store = store
        self.configuration = configuration
        receiveLibrary = configuration.library.map { ($0, configuration.libraryChunkIndex, configuration.libraryScanCache, configuration.newFileModes) }
        admission = ConnectionAdmission(limits: configuration.connectionLimits)
        currentTrust = CurrentTrust(configuration.trust)
        self.transport = transport
        // Made on first use: an engine that never browses or advertises never touches avahi.
        let localDeviceID = identity.deviceID.description
        self.discovery = discovery ?? LazyDiscovery { DNSSDDiscovery(configuration: .init(serviceType: type, localDeviceID: localDeviceID)) }
    }

    // MARK: - Discovery and connections

    /// Devices appearing and disappearing nearby: DNS-SD under `serviceType` (or the
    /// discovery given at init, e.g. with configured static peers merged in).
    public nonisolated func nearbyPeers() -> AsyncStream<DiscoveryEvent> {
        discovery.events()
    }

    /// Dials a peer that discovery reported, pinning the Device ID it advertised: the
    /// handshake must prove that key, or the connection is dropped before we identify
    /// ourselves. Tries each resolved address, then the host name.
    @discardableResult
    public func connect(to discovered: DiscoveredPeer, timeout: Duration = .seconds(10)) async throws(SyncError) -> Peer {
        guard let text = discovered.deviceID, let expected = try? DeviceID(parsing: text) else {
            throw .connectionFailed("\(discovered.instanceName) advertises no valid Device ID; connect(to:expecting:) with one you trust")
        }
        var failure = SyncError.connectionFailed("\(discovered.instanceName) has no address")
        for host in discovered.addresses + [discovered.host] where !host.isEmpty {
            do {
                return try await connect(to: PeerAddress(host: host, port: discovered.port), expecting: expected, timeout: timeout)
            } catch {
                // A decline or a wrong key is the device's answer: other addresses would give the same.
                guard case .connectionFailed = error else { throw error }
                failure = error
            }
        }
        throw failure
    }

    /// Requests from devices that want to connect and are not trusted to do so unasked.
    ///
    /// One stream per engine, for one consumer: every call returns the same stream, and
    /// each request goes to whichever loop takes it first. It keeps the newest 64 unread
    /// requests (an unanswered one is declined when its timeout runs out, read or not) and
    /// finishes when the engine stops.
    public nonisolated func connectionRequests() -> AsyncStream<ConnectionRequest> { connectionRequestStream.stream }

    /// Offers from connected peers, one consumer as for `connectionRequests()`; the
    /// newest 256 unread are kept, and the stream finishes when the engine stops.
    public nonisolated func incomingTransfers() -> AsyncStream<IncomingTransfer> { incomingTransferStream.stream }

    /// Scanning and hashing progress of `send(library:…)`, before any byte moves.
    public nonisolated var preparationProgress: AsyncStream<ScanProgress> { preparation.stream }

    public var connectedPeers: [Peer] { sessions.values.map(\.peer).sorted { $0.name < $1.name } }

    /// Waits until the connection to `peer` ends, and says why; nil at once when it is not
    /// connected, and as soon as the waiting task is cancelled. (A device that refuses
    /// what was asked of it — a pull, say — closes the connection: this is how to hear it,
    /// without polling `connectedPeers`.)
    public func disconnection(of peer: Peer) async -> String? {
        guard let session = sessions[peer.deviceID] else { return nil }
        return await session.waitUntilClosed()
    }

    /// Starts accepting connections (and advertising, when discovery is configured).
    /// - Returns: the address actually bound (port 0 picks a free one).
    @discardableResult
    public func start(listeningOn address: PeerAddress, advertise: Bool = true) async throws(SyncError) -> PeerAddress {
        let listener: any Listener
        do { listener = try await transport.listen(on: address) } catch { throw .connectionFailed("cannot listen on \(address): \(error)") }
        self.listener = listener
        let clock = configuration.clock
        tasks.spawn { [weak self] in
            // A failed accept (out of descriptors, a connection aborted, no buffers) is about that
            // moment, not the listener: back off and go on, so one flood cannot stop `serve` for good.
            var backoff = AcceptBackoff()
            while !Task.isCancelled {
                do throws(TransportError) {
                    let connection = try await listener.accept()
                    backoff.succeeded()
                    await self?.admit(self?.limited(connection) ?? connection)
                } catch {
                    if error == .closed || error == .cancelled || Task.isCancelled { return }
                    let delay = backoff.failed()
                    await self?.noteAcceptFailure(error, retryingIn: delay)
                    try? await clock.sleep(for: delay)
                }
            }
        }
        if advertise {
            do {
                advertisement = try await discovery.advertise(ServiceAdvertisement(
                    instanceName: configuration.deviceName, port: listener.localAddress.port,
                    deviceID: identity.deviceID.description, protocolVersion: WireProtocol.version))
            } catch {
                configuration.log("not advertising on the local network: \(error)")
            }
        }
        return listener.localAddress
    }

    /// Dials a peer. With `expecting`, the handshake must prove that Device ID
    /// (a discovered or pinned peer), or the connection is dropped.
    @discardableResult
    public func connect(to address: PeerAddress, expecting expected: DeviceID? = nil, timeout: Duration = .seconds(10)) async throws(SyncError) -> Peer {
        do {
            let peer = try await dial(address, expecting: expected, timeout: timeout)
            connectFailures[peer.deviceID] = nil
            return peer
        } catch {
            // A send to this device while it is not connected says why (see `start`).
            if let expected { connectFailures[expected] = "\(error)" }
            throw error
        }
    }

    /// Why the last `connect(to:expecting:)` of each device that is not connected failed.
    private var connectFailures: [DeviceID: String] = [:]

    private func dial(_ address: PeerAddress, expecting expected: DeviceID?, timeout: Duration) async throws(SyncError) -> Peer {
        if expected == identity.deviceID { throw Self.selfConnection(address) }
        let connection: any Connection
        do { connection = limited(try await transport.connect(to: address, timeout: timeout)) } catch {
            throw .connectionFailed("\(address): \(error)")
        }
        let channel: SecureChannel
        do { channel = try await SecureChannel.initiate(over: connection, identity: identity, expectedPeer: expected) } catch {
            throw .connectionFailed("\(address): \(error)")
        }
        // A device is never its own peer: it would answer its own holding checks and count
        // itself as one of its own copies.
        guard channel.remoteDeviceID != identity.deviceID else {
            await channel.close()
            throw Self.selfConnection(address)
        }
        do {
            let peer = try await ConnectionSetUp.initiate(on: channel, hello: hello(), address: address)
            await register(PeerSession(peer: peer, channel: channel, context: context()))
            configuration.log("connected to \(peer) at \(address)")
            return peer
        } catch let error as SyncError {
            await channel.close()
            throw error
        } catch {
            await channel.close()
            throw .connectionFailed("\(address): \(error)")
        }
    }

    private static func selfConnection(_ address: PeerAddress) -> SyncError {
        .connectionFailed("\(address) is this device itself (its own Device ID): a device cannot be its own peer")
    }

    /// Every byte this engine sends goes through the run's budget, when it has one.
    private nonisolated func limited(_ connection: any Connection) -> any Connection {
        guard configuration.sendBudget != nil || configuration.receiveBudget != nil else { return connection }
        return RateLimitedConnection(connection, sending: configuration.sendBudget, receiving: configuration.receiveBudget)
    }

    /// The trust policy in force now (see `updateTrust(_:)`).
    public nonisolated var trust: TrustPolicy { currentTrust.policy }

    /// Puts a new trust policy in force at once, for connections already open
    /// too (`lfsync trust` and `untrust` reach a running `serve` without a
    /// restart). A connected device that was trusted to connect and no longer
    /// is loses its connection — and with it every push to or from it in
    /// flight — with a log line; one a person let in at a prompt stays.
    /// - Returns: the peers cut off.
    @discardableResult
    public func updateTrust(_ policy: TrustPolicy) async -> [Peer] {
        let previous = currentTrust.replace(with: policy)
        let cut = sessions.values.filter {
            previous.acceptsConnection(from: $0.peer.deviceID) && !policy.acceptsConnection(from: $0.peer.deviceID)
        }
        // A device that may no longer pull gets no more of what its pulls asked for; its
        // later Pulls, Fetches and chunk requests are refused (each reads the policy in force).
        for (id, answers) in pullAnswers where previous.mayPull(id) && !policy.mayPull(id) {
            pullAnswers[id] = nil
            let running = answers.filter { $0.summariesIfCompleted == nil }
            guard !running.isEmpty else { continue }
            configuration.log("\(sessions[id]?.peer.description ?? id.shortForm) may no longer pull: stopped sending what it pulled")
            for transfer in running { transfer.requestCancel() }
        }
        for session in cut {
            configuration.log("\(session.peer) is no longer trusted: closing its connection")
            await session.close(reason: "no longer trusted")
        }
        return cut.map(\.peer).sorted { $0.name < $1.name }
    }

    /// The open session with `peer`, for the engine's extensions.
    func session(for peer: Peer) -> PeerSession? { sessions[peer.deviceID] }

    public func disconnect(_ peer: Peer) async {
        await sessions[peer.deviceID]?.close(reason: "disconnected")
    }

    /// Stops listening, withdraws the advertisement and closes every connection.
    /// `connectionRequests()` and `incomingTransfers()` end here, so a loop over
    /// them finishes with the engine; a stopped engine is not started again.
    /// Returns once every task it ran has ended — pushes in flight end as their
    /// connections close, each peer's summary delivered — and the ledger has committed
    /// everything they recorded.
    public func stop() async {
        await listener?.close()
        await advertisement?.cancel()
        for session in sessions.values { await session.close(reason: "shutting down") }
        sessions.removeAll()
        // Handshakes under way end now rather than at their deadline.
        for connection in handshaking.values { await connection.abort() }
        connectionRequestStream.continuation.finish()
        incomingTransferStream.continuation.finish()
        await tasks.stop(cancelling: false)
        await store.barrier()
    }

    /// Lets peers the trust policy allows to pull (`TrustPolicy.Entry.mayPull`) ask us
    /// (with a Pull) to offer what they lack.
    public func servePulls(from library: URL, assets: @escaping @Sendable (Peer) async -> [Asset]) {
        pullLibrary = library
        pullHandler = assets
    }

    /// Lets trusted devices ask whether this device holds contents of theirs (a holding
    /// check, PROTOCOL.md "Holding checks"), answered from `library` as `assets` finds it
    /// now; and ask it for chunks of files it holds (a repair).
    package func serveHoldings(from library: URL, assets: @escaping @Sendable () async -> [Asset]) {
        holdings.withLock { $0 = HoldingResponder(library: library, assets: assets, store: store, holder: identity.deviceID) }
    }

    /// Says that the library holding checks are answered from changed (a file written,
    /// copied in, removed): the next check looks at it again instead of reusing its last
    /// look. The engine says so itself after each install; `serve` when its watcher sees a
    /// change.
    package nonisolated func holdingsChanged() {
        holdings.withLock { $0 }?.libraryChanged()
    }

    /// Asks `peer` whether it holds `assets` now; with `proof`, each "yes" must come with the
    /// keyed hash of the content's bytes under a fresh nonce, checked here against our own
    /// bytes (each asset's `library` must be set: a scanned asset's is).
    package func checkHolding(of assets: [Asset], on peer: Peer, proof: Bool = true, timeout: Duration = .seconds(300)) async throws(SyncError) -> [ContentID: HoldingAnswer] {
        guard let session = sessions[peer.deviceID] else { throw .notConnected(peer.deviceID) }
        return try await HoldingChecker(session: session, timeout: timeout, disk: holdingDisk).check(assets, proof: proof)
    }

    /// One chunk of a file `peer` holds, checked against `hash` here; nil when it has none.
    package func fetchChunk(hash: Hash256, length: UInt32, from peer: Peer, timeout: Duration = .seconds(60)) async throws(SyncError) -> [UInt8]? {
        guard let session = sessions[peer.deviceID] else { throw .notConnected(peer.deviceID) }
        guard await session.channel.peerCapabilities.contains(.holdings) else {
            throw .declined(reason: "\(peer) does not answer chunk requests (an older lfsync)")
        }
        let requestID = UInt64.random(in: 1...UInt64.max)
        let reply = try await session.queries.ask(.chunkRequest(.init(requestID: requestID, chunkHash: hash, length: length)),
                                                  requestID: requestID, timeout: timeout)
        guard case let .chunkReply(answer) = reply else { throw .protocolViolation("\(reply.type) in answer to a ChunkRequest") }
        switch answer.outcome {
        case let .bytes(bytes):
            guard bytes.count == Int(length), ContentHash.chunk(bytes) == hash else {
                throw .protocolViolation("\(peer) sent a chunk that does not match its hash")
            }
            return Array(bytes)
        case .notHeld:
            return nil
        case .refused:
            throw .declined(reason: "\(peer) does not let this device read its bytes (not allowed to pull there: 'lfsync trust ... --allow-pull' on it)")
        }
    }

    /// Asks `peer` to offer `contents`, whatever its ledger says this device holds (what
    /// was offloaded here); it answers each Fetch with one offer (empty when it holds none
    /// of them), as for a pull. Returns how many Fetches went out: the offers to wait for.
    @discardableResult
    package func fetch(_ contents: [ContentID], from peer: Peer) async throws(SyncError) -> Int {
        guard let session = sessions[peer.deviceID] else { throw .notConnected(peer.deviceID) }
        guard await session.channel.peerCapabilities.contains(.holdings) else {
            throw .declined(reason: "\(peer) cannot send named contents (an older lfsync)")
        }
        var start = 0, sent = 0
        while start < contents.count {
            let batch = Array(contents[start..<min(start + WireMessage.Fetch.maxContents, contents.count)])
            start += batch.count
            try await session.send([.fetch(.init(requestID: UInt64.random(in: 1...UInt64.max), contents: batch))])
            sent += 1
        }
        return sent
    }

    /// A new connection takes a slot, or is closed at once when the caps are reached.
    private func admit(_ connection: any Connection) {
        let address = connection.remoteAddress?.host ?? "an unknown address"
        switch admission.admit(from: address) {
        case let .refused(reason):
            if let line = refusalLog.note("refused a connection from \(address): \(reason)") { configuration.log(line) }
            // Owed nothing: its descriptor is released now, not after a graceful close's linger.
            tasks.spawn { await connection.abort() }
        case let .admitted(ticket, evicting):
            for dropped in evicting {
                if let old = handshaking.removeValue(forKey: dropped.id) { tasks.spawn { await old.abort() } }
            }
            if !evicting.isEmpty, let line = refusalLog.note("dropped the oldest handshake from \(evicting[0].network) to make room") {
                configuration.log(line)
            }
            handshaking[ticket.id] = connection
            tasks.spawn {
                let session = await self.handshakeIncoming(connection, ticket: ticket)
                if session == nil { await self.release(ticket) }
            }
        }
    }

    private func release(_ ticket: ConnectionAdmission.Ticket) {
        handshaking[ticket.id] = nil
        admission.release(ticket)
    }

    private func logHandshakeFailure(_ line: String) {
        if let line = handshakeFailureLog.note(line) { configuration.log(line) }
    }

    private func noteAcceptFailure(_ error: TransportError, retryingIn delay: Duration) {
        let milliseconds = delay.components.seconds * 1000 + delay.components.attoseconds / 1_000_000_000_000_000
        if let line = refusalLog.note("accepting a connection failed (\(error)); accepting again in \(milliseconds) ms") {
            configuration.log(line)
        }
    }

    /// The responder's set-up: handshake, Hellos, consent. Until the decision the
    /// connection is a stranger's: it must finish its part within
    /// `WireProtocol.setUpTimeout` of the accept, and may send only small frames.
    /// - Returns: the registered session, or nil when the connection went no further.
    private func handshakeIncoming(_ connection: any Connection, ticket: ConnectionAdmission.Ticket) async -> PeerSession? {
        // Closing is what ends any wait on the connection; the handshake has its own deadline too.
        let clock = configuration.clock
        let watchdog = Deadline.after(WireProtocol.setUpTimeout, on: clock) { await connection.abort() }
        defer { watchdog.cancel() }
        let channel: SecureChannel
        do { channel = try await SecureChannel.accept(over: connection, identity: identity, timeout: WireProtocol.setUpTimeout, clock: clock) } catch {
            logHandshakeFailure("incoming connection from \(connection.remoteAddress.map { "\($0.host)" } ?? "?") failed: \(error)")
            return nil
        }
        await channel.limitIncomingFrames(to: WireProtocol.setUpFrameLimit)
        guard channel.remoteDeviceID != identity.deviceID else {
            logHandshakeFailure("refused a connection from \(connection.remoteAddress.map { "\($0.host)" } ?? "?"): it proved this device's own ID")
            await channel.close()
            return nil
        }
        do {
            let theirs = try await ConnectionSetUp.receiveHello(on: channel)
            watchdog.cancel()
            try await ConnectionSetUp.answer(theirs, with: hello(), on: channel)
            let peer = Peer(deviceID: channel.remoteDeviceID, name: theirs.deviceName, address: connection.remoteAddress)
            // No longer a handshake anyone may drop; a trusted device leaves the stranger caps now.
            handshaking[ticket.id] = nil
            let trusted = currentTrust.policy.acceptsConnection(from: peer.deviceID)
            guard admission.helloArrived(ticket, trusted: trusted) else {
                try await ConnectionSetUp.decide(false, on: channel, declinedBy: configuration.deviceName,
                                                 reason: "too many connections are waiting for an answer; try again later")
                logHandshakeFailure("declined connection from \(peer): too many connections waiting for an answer")
                await channel.close()
                return nil
            }
            let accepted: Bool
            if trusted {
                accepted = true
            } else {
                let decision = OneShotDecision()
                connectionRequestStream.continuation.yield(ConnectionRequest(peer: peer, decision: decision))
                guard let answer = await waitForDecision(decision, watching: channel) else {
                    return try await refuseEarlyMessage(on: channel, from: peer)
                }
                accepted = answer
            }
            // Session flow 2: nothing is sent before the decision. What came in with the Hello
            // (or while a person decided) is a violation, not the start of the session.
            if await channel.hasUnreadInput { return try await refuseEarlyMessage(on: channel, from: peer) }
            try await ConnectionSetUp.decide(accepted, on: channel, declinedBy: configuration.deviceName)
            guard accepted else {
                configuration.log("declined connection from \(peer)")
                await channel.close()
                return nil
            }
            admission.authenticated(ticket)
            let session = PeerSession(peer: peer, channel: channel, context: context())
            tickets[ObjectIdentifier(session)] = ticket
            await register(session)
            configuration.log("accepted connection from \(peer)")
            return session
        } catch {
            logHandshakeFailure("incoming connection failed: \(error)")
            await channel.close()
            return nil
        }
    }

    /// Waits for a person's answer while reading what the device sends meanwhile: the
    /// answer, or nil when a message (or the end of the connection) came first — which
    /// Session flow 2 forbids. A message read here that came after all is the session's first.
    private func waitForDecision(_ decision: OneShotDecision, watching channel: SecureChannel) async -> Bool? {
        let first = Eventual<Bool?>()
        let timeout = configuration.decisionTimeout, clock = configuration.clock
        tasks.spawn { first.resolve(await decision.wait(timeout: timeout, clock: clock)) }
        while first.value == nil {
            let early = channel.receiveEarly()
            let ended = Eventual<Bool>()
            tasks.spawn {
                switch await early.outcome.wait() {
                // A quiet spell while the person decides: read on.
                case .failure(.transport(.timedOut(.idle))): ended.resolve(false)
                default:
                    ended.resolve(true)
                    first.resolve(nil)
                }
            }
            tasks.spawn {
                _ = await first.wait()
                ended.resolve(false)
            }
            guard await ended.wait() else { continue }
        }
        guard let answer = first.value ?? nil else {
            // Too late for a person to let it in.
            decision.decide(false, expiring: true)
            return nil
        }
        return answer
    }

    /// A device that sent something before the connection decision is told why (Error 3)
    /// and dropped.
    private func refuseEarlyMessage(on channel: SecureChannel, from peer: Peer) async throws -> PeerSession? {
        let reason = "nothing may be sent before the connection decision"
        logHandshakeFailure("dropped \(peer): \(reason)")
        try? await channel.send(.error(.init(code: .unexpectedMessage, message: reason)))
        await channel.close()
        return nil
    }

    /// The newest connection from a peer replaces the one before. Closing the old one can
    /// take a while (it lets queued installs finish), and another connection from the same
    /// peer may register meanwhile: whichever is in the table after the wait is replaced.
    private func register(_ session: PeerSession) async {
        let id = session.peer.deviceID
        while let previous = sessions[id], previous !== session {
            sessions[id] = session
            await previous.close(reason: "replaced by a new connection")
            guard sessions[id] === session else {
                // A newer connection replaced this one while we waited.
                await session.close(reason: "replaced by a new connection")
                unregister(session)
                return
            }
        }
        sessions[id] = session
        await session.start { [weak self] closed in await self?.unregister(closed) }
        if !tasks.spawn({ await session.run() }) { await session.close(reason: "shutting down") }
    }

    private func unregister(_ session: PeerSession) {
        if sessions[session.peer.deviceID] === session {
            sessions[session.peer.deviceID] = nil
            // No sync can follow its pushes any more.
            placementsAwaitingSync.release(from: session.peer.deviceID)
        }
        if let ticket = tickets.removeValue(forKey: ObjectIdentifier(session)) { admission.release(ticket) }
    }

    private func hello() -> WireMessage.Hello {
        ConnectionSetUp.hello(deviceName: configuration.deviceName)
    }

    private func context() -> SessionContext {
        let store = store
        return SessionContext(
            currentTrust: currentTrust, decisionTimeout: configuration.decisionTimeout, clock: configuration.clock,
            importerProvider: { [weak self] () throws(SyncError) -> LibraryImporter in
                guard let self else { throw .cancelled }
                return try self.importerForReceiving()
            },
            announceTransfer: { [incomingTransferStream] in incomingTransferStream.continuation.yield($0) },
            onReceived: { [weak self] contents, files, peer in
                let key = peer.ledgerKey
                _ = try? await store.write { store throws(SQLiteError) in
                    try store.recordSynced(contents, peer: key)
                    try store.recordCompositions(files)
                }
                // What the library holds changed: the next holding check looks again.
                self?.holdingsChanged()
            },
            onPull: { [weak self] peer, excludes throws(SyncError) in
                guard let self else { return }
                try await self.answerPull(from: peer, excluding: excludes)
            },
            onFetch: { [weak self] peer, contents throws(SyncError) in
                guard let self else { return }
                try await self.answerFetch(from: peer, contents: contents)
            },
            onHoldingCheck: { [weak self] check, peer in
                await self?.answerHoldingCheck(check, from: peer) ?? .refused
            },
            onChunkRequest: { [weak self] request, peer in
                await self?.answerChunkRequest(request, from: peer) ?? .refused
            },
            onPathStateRequest: { [weak self] request, peer in
                await self?.answerPathStateRequest(request, from: peer) ?? .refused(request.requestID)
            },
            onSyncRequest: { [weak self] request, peer in
                await self?.answerSyncRequest(request, from: peer)
                    ?? .init(requestID: request.requestID, status: .failed, reason: "shutting down")
            },
            leaveToSync: { [receiveLibrary, placementsAwaitingSync] peer, paths in
                guard let library = receiveLibrary else { return [] }
                let key = OffloadedFile.libraryKey(library.url)
                let tracked = Set(((try? await store.read { store throws(SQLiteError) in try store.pathHistory(library: key, paths: paths) }) ?? [:]).keys)
                // Where nothing stands, the push places the file: the sync, not a recorder, versions it.
                placementsAwaitingSync.add(paths.filter { path in
                    guard !tracked.contains(path) else { return false }
                    var status = stat()
                    return lstat(library.url.path + "/" + path.string, &status) != 0 && errno == ENOENT
                }, from: peer.deviceID)
                return tracked
            },
            logger: configuration.log)
    }

    private let importerLock = LockedState<LibraryImporter?>(nil)

    /// Paths pushes a sync follows are placing in the receiving library, until that sync
    /// is applied: recorders leave them to it (`PlacementsAwaitingSync`).
    package nonisolated let placementsAwaitingSync = PlacementsAwaitingSync()

    /// The importer is opened lazily (and once) so a send-only device never touches a library.
    nonisolated private func importerForReceiving() throws(SyncError) -> LibraryImporter {
        guard let library = receiveLibrary else { throw .noLibrary }
        return try importerLock.withLock { (cached: inout LibraryImporter?) throws(SyncError) -> LibraryImporter in
            if let cached { return cached }
            do {
                let importer = try LibraryImporter(
                    library: library.url, chunkIndex: library.chunkIndex, scanCache: library.scanCache, modes: library.modes)
                cached = importer
                return importer
            } catch {
                throw .protocolViolation("cannot open library: \(error)")
            }
        }
    }

    // MARK: - Sending

    /// Offers `assets` (scanned from `library`) to the destination peers and
    /// sends each peer only the chunks it lacks. Returns at once; follow the
    /// transfer for per-peer progress and outcome.
    /// - Parameter settledStatus: the scan's `settledStatus`: chunks of a file that
    ///   still shows exactly that status are sent without being hashed again.
    ///   Without it every chunk read is checked against its hash.
    /// - Parameter syncFollows: see `push(library:…)`.
    public func send(
        _ assets: [Asset], from library: URL, settledStatus: SettledFiles = SettledFiles(),
        to destination: TransferDestination = .allConnectedPeers, syncFollows: Bool = false
    ) -> OutgoingTransfer {
        start(OutgoingPush(assets: assets, settled: settledStatus, offerIDs: offerIDs, syncFollows: syncFollows), from: library, to: destination)
    }

    /// Offers one asset (see `send(_:from:settledStatus:to:)`).
    public func send(_ asset: Asset, from library: URL, to destination: TransferDestination = .allConnectedPeers) -> OutgoingTransfer {
        send([asset], from: library, to: destination)
    }

    /// Offers assets a scan found, from the library it found them in (`Asset.library`).
    /// - Throws: `.unknownLibrary` for an asset no scan found, or assets of two libraries
    ///   (send each library's on its own).
    public func send(_ assets: [Asset], to destination: TransferDestination = .allConnectedPeers) async throws(SyncError) -> OutgoingTransfer {
        guard let first = assets.first else { return send([], from: URL(fileURLWithPath: "/"), to: destination) }
        guard let library = first.library else { throw .unknownLibrary(first.contentID) }
        if let other = assets.first(where: { $0.library?.standardizedFileURL != library.standardizedFileURL }) {
            throw .unknownLibrary(other.contentID)
        }
        return send(assets, from: library, to: destination)
    }

    /// Offers one asset a scan found (see `send(_:to:)`).
    public func send(_ asset: Asset, to destination: TransferDestination = .allConnectedPeers) async throws(SyncError) -> OutgoingTransfer {
        try await send([asset], to: destination)
    }

    /// Scans `library` and sends it as it is scanned: each run of folders is
    /// offered as soon as it is hashed, while the next is read (hashing still
    /// happens once, however many peers). Returns once the library's folders
    /// have been walked — a library that cannot be read throws here — with
    /// the transfer and the scan still under way.
    /// - Parameters:
    ///   - cache: the library's scan cache: unchanged files are not hashed again.
    ///   - chunkIndex: fed with the chunks of newly hashed files.
    ///   - exclusions: what the scan leaves out (by default the built-in patterns and the library's `.lfsyncignore`).
    ///   - segmentFiles: about how many files (whole folders) are hashed before they are offered.
    ///   - within: only the assets with a file at or below this library-relative path (a
    ///     folder of the library, pushed at its place in it); nil for the whole library.
    ///   - syncFollows: the caller asks each peer that keeps path versions to sync
    ///     (`requestSync`) once the push is done: such a peer places only new files from the
    ///     push, and the sync applies edits, renames and deletions.
    public func push(
        library: URL, cache: ScanCache? = nil, chunkIndex: ChunkIndex? = nil, exclusions: ScanExclusions = ScanExclusions(),
        within: RelativePath? = nil, to destination: TransferDestination = .allConnectedPeers, segmentFiles: Int = 1024,
        syncFollows: Bool = false
    ) async throws(LibraryScanner.Failure) -> LibraryPush {
        let push = OutgoingPush(offerIDs: offerIDs, syncFollows: syncFollows)
        let scanner = LibraryScanner(root: library, cache: cache, chunkIndex: chunkIndex, exclusions: exclusions)
        let continuation = preparation.continuation
        let (walked, walkedSignal) = AsyncStream<Void>.makeStream()
        let scan = Eventual<Result<LibraryScan, LibraryScanner.Failure>>()
        // A sync needs the whole scan afterwards (its files and which were settled): kept only then.
        let whole = syncFollows ? WholeScan() : nil
        tasks.spawn {
            defer { walkedSignal.finish() }
            do throws(LibraryScanner.Failure) {
                var scanned = try await scanner.scan(
                    segmentFiles: segmentFiles,
                    walked: { files, bytes in
                        push.setTotals(files: UInt64(files), bytes: bytes)
                        walkedSignal.yield()
                    },
                    segment: { segment in
                        whole?.add(segment)
                        guard let within else { return await push.append(segment) }
                        let prefix = Array((within.string + "/").utf8)
                        let kept = segment.assets.filter { asset in
                            asset.files.contains { $0.manifest.path == within || Array($0.manifest.path.string.utf8).starts(with: prefix) }
                        }
                        await push.append(ScanSegment(assets: kept, settled: segment.settled))
                    },
                    progress: { continuation.yield($0) })
                push.endOfAssets()
                if let whole { (scanned.assets, scanned.settledStatus) = whole.result() }
                scan.resolve(.success(scanned))
            } catch {
                push.endOfAssets(failure: error.description)
                scan.resolve(.failure(error))
            }
        }
        var didWalk = false
        for await _ in walked {
            didWalk = true
            break
        }
        if !didWalk, case let .failure(error) = await scan.wait() { throw error }
        return LibraryPush(transfer: start(push, from: library, to: destination), scan: scan, push: push)
    }

    /// Scans `library` (reporting `preparationProgress`) while it sends it (see `push(library:)`).
    public func send(library: URL, cache: ScanCache? = nil, to destination: TransferDestination = .allConnectedPeers) async throws -> OutgoingTransfer {
        try await push(library: library, cache: cache, to: destination).transfer
    }

    /// Starts one send job per destination peer over one shared reader.
    private func start(_ push: OutgoingPush, from library: URL, to destination: TransferDestination) -> OutgoingTransfer {
        // Each peer once, however often it was named.
        var targets: [PeerSession] = []
        var missing: [Peer] = []
        var named = Set<DeviceID>()
        switch destination {
        case .allConnectedPeers:
            targets = sessions.values.sorted { $0.peer.deviceID.description < $1.peer.deviceID.description }
        case let .peers(peers):
            for peer in peers where named.insert(peer.deviceID).inserted {
                if let session = sessions[peer.deviceID] { targets.append(session) } else { missing.append(peer) }
            }
        }
        let transfer = OutgoingTransfer(peerCount: targets.count + missing.count)
        let store = store
        for peer in missing {
            // A destination that is not connected takes none of it: the same rules count and
            // record that (`PeerPushMachine`), with why it is not connected.
            let consumer = push.addConsumer()
            let reason = connectFailures[peer.deviceID].map { "not connected: \($0)" } ?? "not connected"
            tasks.spawn { await PeerSendJob.failUnconnected(peer, reason: reason, push: push, consumer: consumer, store: store, transfer: transfer) }
        }
        // Every chunk is read (and, unless settled, hashed) once for all peers: demand is
        // registered per batch for every peer still sending, and each peer drops what it doesn't need.
        let reader = BroadcastChunkReader(rootPath: library.standardizedFileURL.path, peerCount: targets.count)
        transfer.chunkReader = reader
        let consumers = targets.map { _ in push.addConsumer() }
        let timeout = configuration.offerReplyTimeout, clock = configuration.clock
        for (session, consumer) in zip(targets, consumers) {
            tasks.spawn {
                await PeerSendJob(
                    session: session, push: push, consumer: consumer, reader: reader, store: store,
                    transfer: transfer, replyTimeout: timeout, clock: clock
                ).run()
            }
        }
        return transfer
    }

    /// Asks a trusted peer to offer us what it has that we lack.
    /// - Parameter excludes: this side's ignore rules (gitignore lines), which the peer
    ///   applies after its own: what they match is never offered.
    public func pull(from peer: Peer, excluding excludes: [String] = []) async throws(SyncError) {
        guard let session = sessions[peer.deviceID] else { throw .notConnected(peer.deviceID) }
        try await session.send([.pull(.init(requestID: UInt64.random(in: 1...UInt64.max), excludes: excludes))])
    }

    /// A holding check from `peer`: answered only to a device in the trust list.
    private func answerHoldingCheck(_ check: WireMessage.HoldingCheck, from peer: Peer) async -> HoldingResponse {
        guard currentTrust.policy.entries[peer.deviceID] != nil else {
            configuration.log("refused a holding check from \(peer): not trusted")
            return .refused
        }
        guard let responder = holdings.withLock({ $0 }) else { return .answers(check.contents.map { _ in .notHeld }) }
        return await responder.answers(to: check)
    }

    /// A chunk request from `peer`: reading this device's bytes, so answered only to a device
    /// allowed to pull (PROTOCOL.md, "Who may read a device's bytes"), from the receiving
    /// library's chunk index, with bytes read and checked now.
    private func answerChunkRequest(_ request: WireMessage.ChunkRequest, from peer: Peer) async -> WireMessage.ChunkReply.Outcome {
        // A device this one asked to sync with it reads the bytes it needs for that sync.
        if let source = invitations[peer.deviceID]?.values.first {
            return await source.chunk(request.chunkHash, request.length).map { .bytes($0[...]) } ?? .notHeld
        }
        guard currentTrust.policy.mayPull(peer.deviceID) else {
            if let line = refusalLog.note("refused a chunk request from \(peer): not allowed to pull") { configuration.log(line) }
            return .refused
        }
        guard let importer = try? importerForReceiving() else { return .notHeld }
        let (hash, length) = (request.chunkHash, request.length)
        let bytes = await holdingDisk.run { importer.verifiedChunk(hash: hash, length: length) }
        return bytes.map { .bytes($0[...]) } ?? .notHeld
    }

    /// A Fetch: the named contents this device holds are offered to `peer`, if it may pull,
    /// less what the exclude rules of its last Pull on this connection leave out.
    private func answerFetch(from peer: Peer, contents: [ContentID]) async throws(SyncError) {
        let (handler, library) = try pullSource(for: peer)
        let wanted = Set(contents)
        let assets = await handler(peer).filter { wanted.contains($0.contentID) }
        try answer(peer, with: Self.narrowed(assets, by: pullRules[peer.deviceID] ?? IgnoreRules()), from: library)
    }

    /// The exclude rules of each device's last Pull, applied to the Fetches that follow it.
    private var pullRules: [DeviceID: IgnoreRules] = [:]

    /// Sends `assets` to `peer` in answer to its Pull or Fetch, unless it lost the permission
    /// to pull while they were gathered; kept so that losing it later stops the sending.
    private func answer(_ peer: Peer, with assets: [Asset], from library: URL) throws(SyncError) {
        guard currentTrust.policy.mayPull(peer.deviceID) else {
            throw .declined(reason: "\(peer) is not allowed to pull from this device")
        }
        let transfer = send(assets, from: library, to: .peers([peer]))
        var answers = (pullAnswers[peer.deviceID] ?? []).filter { $0.summariesIfCompleted == nil }
        answers.append(transfer)
        pullAnswers[peer.deviceID] = answers
    }

    /// What a Pull or a Fetch from `peer` is answered from, if it may pull. A permission of
    /// its own: accepting a peer's offers unasked does not let it take the library (which
    /// holds what every other device sent here).
    private func pullSource(for peer: Peer) throws(SyncError) -> (assets: @Sendable (Peer) async -> [Asset], library: URL) {
        guard currentTrust.policy.mayPull(peer.deviceID) else {
            throw .declined(reason: "\(peer) is not allowed to pull from this device")
        }
        guard let handler = pullHandler, let library = pullLibrary else { throw .declined(reason: "this device does not serve pulls") }
        return (handler, library)
    }

    private func answerPull(from peer: Peer, excluding excludes: [String]) async throws(SyncError) {
        let (handler, library) = try pullSource(for: peer)
        var theirs = IgnoreRules()
        do {
            for pattern in excludes { try theirs.add(line: pattern, source: "\(peer.name)'s pull") }
        } catch {
            throw .declined(reason: "the pull's exclude rules are invalid: \(error)")
        }
        pullRules[peer.deviceID] = theirs
        let assets = Self.narrowed(await handler(peer), by: theirs)
        let candidates = assets.map(\.contentID), key = peer.ledgerKey
        let notSynced = Set((try? await store.read { store throws(SQLiteError) in
            try store.contentIDs(notSyncedWith: key, from: candidates)
        }) ?? candidates)
        try answer(peer, with: assets.filter { notSynced.contains($0.contentID) }, from: library)
    }

    /// The assets without the files `rules` exclude (the puller's own rules): an
    /// asset keeps the files that remain, under the content ID they make, and
    /// goes when none does.
    static func narrowed(_ assets: [Asset], by rules: IgnoreRules) -> [Asset] {
        guard !rules.isEmpty else { return assets }
        return assets.compactMap { asset in
            let kept = asset.files.filter { !rules.isExcludedWithAncestors(Array($0.manifest.path.string.utf8)) }
            if kept.count == asset.files.count { return asset }
            return kept.isEmpty ? nil : Asset(files: kept)
        }
    }
}
