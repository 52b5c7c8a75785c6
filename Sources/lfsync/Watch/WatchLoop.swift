import Foundation
import LocalFirstSync
import LFSyncCrypto
import LFSyncContent
import LFSyncStore
import LFSyncTransport
import LFSyncTCP
import LFSyncDiscovery
import LFSyncSystem

/// `watch`'s one loop: every event (tree changes, deadlines, config changes,
/// peers seen on the network, signals) arrives in one stream and is handled
/// here in order, so there is one place that decides when to push and to whom.
/// A pass runs inside the loop: events that arrive meanwhile wait for it, which
/// is how a SIGTERM lets the push in flight finish.
final class WatchLoop {
    private let libraries: [URL]
    private let indexes: [LibraryIndex]
    private let exclusions: ScanExclusions
    private var targets: WatchTargets
    private let sync: LocalSync
    private let localDeviceID: DeviceID
    private let ledger: SyncStateStore
    private let home: StateHome
    private let console: Console
    private let json: Bool
    private var schedule: WatchSchedule
    private let rescanInterval: Duration
    private let watchLimit: Int?
    /// `--delete`, `--max-delete`: what the syncs after each push ask (see `PushSync`).
    private let deletions: Bool
    private let maxDeletions: UInt32?
    /// This device's short ID, for the versions it records.
    private let device: UInt64
    /// Shared with the syncs this process applies (`lfsync sync`): a record never runs beside one.
    private let recordGate: SerialGate?

    private var backoff: [DeviceID: RetryBackoff] = [:]
    /// When to ask again after a sync that did not apply everything.
    private var syncRetry = RetryBackoff()
    private var reportedUnreachable = Set<DeviceID>()
    private var watchers: [TreeWatcher] = []
    private var fellBack = false
    private var reportedUnmounted = Set<URL>()
    private var waitingForLockLogged = false
    private let events = AsyncStream<WatchEvent>.makeStream()
    private var timer: Task<Void, Never>?
    private var timerDeadline: ContinuousClock.Instant?

    init(
        libraries: [URL], indexes: [LibraryIndex], exclusions: ScanExclusions, targets: WatchTargets, sync: LocalSync,
        ledger: SyncStateStore, home: StateHome, console: Console, json: Bool, schedule: WatchSchedule,
        rescanInterval: Duration, watchLimit: Int?, deletions: Bool = false, maxDeletions: UInt32? = nil, device: UInt64 = 0,
        recordGate: SerialGate? = nil
    ) {
        self.recordGate = recordGate
        self.deletions = deletions
        self.maxDeletions = maxDeletions
        self.device = device
        self.libraries = libraries
        self.indexes = indexes
        self.exclusions = exclusions
        self.targets = targets
        self.sync = sync
        localDeviceID = targets.localDeviceID
        self.ledger = ledger
        self.home = home
        self.console = console
        self.json = json
        self.schedule = schedule
        self.rescanInterval = rescanInterval
        self.watchLimit = watchLimit
    }

    func run() async -> ExitCode {
        let continuation = events.continuation
        var producers: [Task<Void, Never>] = []
        for (index, library) in libraries.enumerated() {
            // The same rules the scan applies: an excluded folder is not even watched.
            let rules = (try? exclusions.effectiveRules(forLibraryAt: library.path)) ?? IgnoreRules()
            let watcher = TreeWatcher(rootPath: library.path, maxWatches: watchLimit) { relative in
                rules.isExcluded(relative, isDirectory: true)
            }
            watchers.append(watcher)
            let stream = watcher.events()
            producers.append(Task {
                for await event in stream { continuation.yield(.tree(library: index, event)) }
            })
        }
        producers.append(Task {
            let signal = await SignalWaiter.wait()
            continuation.yield(.stop(signal: signal))
        })
        let sync = sync
        producers.append(ConfigWatcher(url: home.configURL, ownID: localDeviceID).start(log: { [console] in console.error($0) }) { config in
            // Trust applies at once, even in the middle of a push; the targets follow in the loop.
            await sync.updateTrust(config.trustPolicy)
            continuation.yield(.config(config))
        })
        let targetIDs = Set(targets.targets.map(\.deviceID))
        producers.append(Task {
            for await event in sync.nearbyPeers() {
                guard case let .found(peer) = event, let text = peer.deviceID, let id = try? DeviceID(parsing: text),
                      targetIDs.contains(id) else { continue }
                continuation.yield(.appeared(id))
            }
        })
        // Start-up: everything a target has not confirmed yet goes out first.
        schedule.requestPass(at: .now)
        rearm()

        var exit = ExitCode.success
        loop: for await event in events.stream {
            switch event {
            case let .tree(library, change):
                handle(change, in: library)
            case .wake:
                timerDeadline = nil
            case let .config(config):
                let before = Set(targets.targets.map(\.deviceID))
                let addresses = Dictionary(targets.targets.map { ($0.deviceID, $0.address) }) { first, _ in first }
                try? targets.update(config)
                let after = Set(targets.targets.map(\.deviceID))
                if before != after {
                    log("targets now \(targets.targets.map(\.label).joined(separator: ", "))")
                    schedule.requestPass(at: .now)
                }
                // A device given a new address ('lfsync trust ID --address') is dialled at
                // once, from the first back-off: what failed was the old address.
                for target in targets.targets where before.contains(target.deviceID) && addresses[target.deviceID] != target.address {
                    guard backoff[target.deviceID] != nil, await !isConnected(target.deviceID) else { continue }
                    backoff[target.deviceID] = RetryBackoff()
                    schedule.requestPass(at: .now)
                }
            case let .appeared(id):
                if var entry = backoff[id], await !isConnected(id) {
                    entry.retryNow(at: .now)
                    backoff[id] = entry
                    schedule.requestPass(at: .now)
                }
            case let .stop(signal):
                log("stopping (signal \(signal))")
                emit(WatchLogEvent("stopped", message: "signal \(signal)"))
                exit = .success
                break loop
            }
            if schedule.isDue(at: .now) { await pass() }
            rearm()
        }
        timer?.cancel()
        for watcher in watchers { watcher.stop() }
        for producer in producers { producer.cancel() }
        await sync.stop()
        return exit
    }

    // MARK: - Events

    private func handle(_ change: TreeWatcher.Event, in library: Int) {
        let name = libraries[library].path
        switch change {
        case let .ready(directories):
            log("watching \(name) (\(directories) folder\(directories == 1 ? "" : "s")) for \(targets.targets.map(\.label).joined(separator: ", "))")
            var event = WatchLogEvent("watching", library: name)
            event.directories = directories
            emit(event)
        case .changed:
            schedule.changed(at: .now)
        case .overflow:
            log("\(name): too many changes at once for inotify's queue; rescanning the whole folder")
            emit(WatchLogEvent("overflow", library: name))
            schedule.requestPass(at: .now)
        case let .watchLimitReached(watched):
            guard !fellBack else { return }
            fellBack = true
            log("\(name): the inotify watch limit was reached after \(watched) folders; rescanning every \(Self.seconds(rescanInterval)) s instead (raise fs.inotify.max_user_watches to watch it all)")
            emit(WatchLogEvent("fallback", library: name, message: "watch limit reached after \(watched) folders"))
            schedule.rescanInterval = rescanInterval
            schedule.requestPass(at: .now)
        }
    }

    /// One timer for the next deadline; none while nothing is pending (an idle watch never wakes).
    private func rearm() {
        let next = schedule.nextPass
        guard next != timerDeadline else { return }
        timer?.cancel()
        timerDeadline = next
        guard let next else { return }
        let continuation = events.continuation
        timer = Task {
            try? await Task.sleep(until: next, clock: .continuous)
            if !Task.isCancelled { continuation.yield(.wake) }
        }
    }

    // MARK: - A pass

    /// Connects what is due, then for each library sends every settled asset that
    /// some connected target has not confirmed, to those targets.
    private func pass() async {
        let started = ContinuousClock.now
        let lock: ProcessLock
        do { lock = try ProcessLock(at: home.lockURL) } catch {
            // A cron `push --batch` is running: the pass waits for it rather than sending beside it.
            if !waitingForLockLogged { log("another lfsync run holds the lock; waiting for it") }
            waitingForLockLogged = true
            schedule.requestPass(at: started + .seconds(2))
            return
        }
        defer { withExtendedLifetime(lock) {} }
        waitingForLockLogged = false
        schedule.passStarted(at: started)
        let connected = await connectDue()
        guard !connected.isEmpty else { return }
        for (index, library) in libraries.enumerated() {
            await push(library, index: indexes[index], to: connected)
        }
        for index in indexes { index.releaseMemory() }
        ledger.releaseMemory()
        MemoryTuning.releaseFreeMemory()
    }

    /// At most this many assets per push: a catch-up of 200,000 files goes out as a
    /// series of pushes, so what one push holds in memory (offers, replies, the ledger's
    /// queue) is bounded, and an idle `watch` does not keep a catch-up's peak afterwards.
    static let assetsPerPush = 10_000

    private func push(_ library: URL, index: LibraryIndex, to targets: [Peer]) async {
        guard let selection = await select(library, index: index, for: targets) else { return }
        var peers = targets
        var start = 0
        while start < selection.ready.count, !peers.isEmpty {
            let slice = Array(selection.ready[start..<min(start + Self.assetsPerPush, selection.ready.count)])
            start += slice.count
            let deferred = start == selection.ready.count ? selection.deferred : 0
            peers = await send(slice, from: library, settled: selection.settled, to: peers, deferred: deferred)
        }
        await syncAfterPush(library, index: index, with: peers)
    }

    /// Each target still connected that keeps path versions applies this library's history
    /// (edits, renames, and deletions with --delete); one log line per target that changed
    /// something or could not.
    private func syncAfterPush(_ library: URL, index: LibraryIndex, with peers: [Peer]) async {
        guard !peers.isEmpty else { return }
        let pushSync = PushSync(library: library, index: index, ledger: ledger, sync: sync, device: device)
        let results = await pushSync.requestSyncs(with: peers, deletions: deletions, maxDeletions: maxDeletions,
                                                  manifests: PushSync.cachedManifests(index))
        // A sync that left changes for later (a file being written there, a link lost) is
        // asked again after a back-off (5 s doubling to 5 min; a declined one is not); nothing else would ask until the next change here.
        if results.contains(where: { $0.reply.map { $0.status == .partial || $0.status == .failed } ?? true }) {
            schedule.recheck(at: .now + syncRetry.failed(at: .now))
        } else {
            syncRetry.succeeded()
        }
        for result in results {
            let counts = result.reply?.counts
            let changed = (counts?.taken ?? 0) + (counts?.deleted ?? 0) + (counts?.conflicts ?? 0) + (counts?.retained ?? 0) > 0
            guard changed || result.reply?.status != .synced else { continue }
            log("\(library.lastPathComponent) with \(result.peer.name): \(PushSync.summary(result))")
            var event = WatchLogEvent("sync", library: library.path, peer: result.peer.name, message: PushSync.summary(result))
            event.stored = counts.map { Int($0.taken) }
            event.bytesFetched = counts?.bytesFetched
            emit(event)
        }
    }

    /// What a pass sends from one library: every asset some target has not confirmed
    /// (the ledger's word) and whose files have settled. The scan is released on return;
    /// only the selection is kept while it is sent.
    private func select(_ library: URL, index: LibraryIndex, for peers: [Peer]) async -> (ready: [Asset], settled: SettledFiles, deferred: Int)? {
        let scan: LibraryScan
        do {
            scan = try await LibraryScanner(root: library, cache: index.scanCache, chunkIndex: index.chunkIndex, exclusions: exclusions).scan()
        } catch {
            log("\(library.path): cannot scan: \(error)")
            emit(WatchLogEvent("error", library: library.path, message: "\(error)"))
            return nil
        }
        // The history first, of the files that settled (what changed within --settle waits
        // for the next pass, as its push does).
        do {
            let pushSync = PushSync(library: library, index: index, ledger: ledger, sync: sync, device: device)
            let root = library.path
            let settleNs = schedule.settleNs
            let stillChanging: @Sendable (RelativePath) -> Bool = { path in
                Self.lastChangeNs(root + "/" + path.string) > FileTime.now() - settleNs
            }
            let record: @Sendable () async -> Result<HistoryRecorder.Outcome, any Error> = {
                do { return .success(try await pushSync.record(scan, settledOnly: false, stillChanging: stillChanging)) } catch { return .failure(error) }
            }
            let outcome: Result<HistoryRecorder.Outcome, any Error>
            if let recordGate { outcome = await recordGate.run(record) } else { outcome = await record() }
            let recorded = try outcome.get()
            // What the record left for later (a file still being written) needs a pass of its
            // own: its content may already be on every peer, so no push would bring one.
            if recorded.leftForLater > 0 { schedule.recheck(at: .now + schedule.settle + .milliseconds(50)) }
            if recorded.looksUnmounted, !reportedUnmounted.contains(library) {
                reportedUnmounted.insert(library)
                log("\(library.path) looks unmounted or emptied (its .lfsync/library-id marker is missing, or no file is left): its missing files are not recorded as deleted")
            }
        } catch {
            log("\(library.path): could not record its changes: \(error)")
        }
        let all = scan.assets.map(\.contentID)
        var wanted = Set<ContentID>()
        for peer in peers {
            let missing = (try? await ledger.contentIDs(notSyncedWith: peer.deviceID, from: all)) ?? all
            wanted.formUnion(missing)
        }
        guard !wanted.isEmpty else { return ([], scan.settledStatus, 0) }
        // Never a file still being written: what changed within the settle time waits for the next pass.
        let nowNs = FileTime.now()
        let settleNs = schedule.settleNs
        var ready: [Asset] = []
        var deferred = 0
        var recheckNs: Int64?
        for asset in scan.assets where wanted.contains(asset.contentID) {
            let newest = asset.files.map { Self.lastChangeNs(library.path + "/" + $0.manifest.path.string) }.max() ?? 0
            if newest > nowNs - settleNs {
                deferred += 1
                recheckNs = min(recheckNs ?? .max, newest + settleNs)
            } else {
                ready.append(asset)
            }
        }
        if let recheckNs {
            schedule.recheck(at: .now + .nanoseconds(max(0, recheckNs - nowNs) + 50_000_000))
        }
        return (ready, scan.settledStatus, deferred)
    }

    /// One push: `assets` to `peers`, one log line (or JSON event) per peer.
    /// - Returns: the peers still there for the next push of the pass.
    private func send(_ assets: [Asset], from library: URL, settled: SettledFiles, to peers: [Peer], deferred: Int) async -> [Peer] {
        let started = ContinuousClock.now
        let transfer = await sync.send(assets, from: library, settledStatus: settled, to: .peers(peers), syncFollows: true)
        let summaries = await transfer.waitUntilCompleted()
        let seconds = Self.seconds(ContinuousClock.now - started)
        var remaining: [Peer] = []
        for summary in summaries.sorted(by: { $0.peer.name < $1.peer.name }) {
            var line = "pushed \(assets.count) asset\(assets.count == 1 ? "" : "s") from \(library.lastPathComponent) to \(summary.peer.name): \(summary.assetsStored) stored"
            if summary.assetsFailed > 0 { line += ", \(summary.assetsFailed) failed" }
            line += ", \(ByteCountText.format(summary.chunkBytesSent)) sent in \(String(format: "%.1f", seconds)) s"
            if deferred > 0 { line += "; \(deferred) still changing, sent later" }
            if case let .failed(reason) = summary.state { line += " (\(reason))" }
            log(line)
            var event = WatchLogEvent("push", library: library.path, peer: summary.peer.name)
            event.assets = assets.count
            event.stored = summary.assetsStored
            event.failed = summary.assetsFailed
            event.chunkBytesSent = summary.chunkBytesSent
            event.seconds = seconds
            event.deferred = deferred
            if case let .failed(reason) = summary.state { event.message = reason }
            emit(event)
            switch summary.state {
            case .completed:
                remaining.append(summary.peer)
            default:
                if await !isConnected(summary.peer.deviceID) {
                    lost(summary.peer.deviceID, label: summary.peer.name, reason: "disconnected during the push")
                }
            }
        }
        return remaining
    }

    /// Dials every target that is not connected and whose back-off has run out.
    /// - Returns: the connected targets.
    private func connectDue() async -> [Peer] {
        let now = ContinuousClock.now
        var connected: [Peer] = []
        let open = await sync.connectedPeers
        for target in targets.targets {
            if let peer = open.first(where: { $0.deviceID == target.deviceID }) {
                connected.append(peer)
                continue
            }
            if let entry = backoff[target.deviceID], !entry.isDue(at: now) {
                // Not yet: a pass that ran early for something else (a file changed) must not
                // swallow the retry this target is owed.
                if let retryAt = entry.retryAt { schedule.requestPass(at: retryAt) }
                continue
            }
            do {
                connected.append(try await connect(target))
                backoff[target.deviceID]?.succeeded()
                if reportedUnreachable.remove(target.deviceID) != nil {
                    log("\(target.label) is reachable again")
                    emit(WatchLogEvent("reachable", peer: target.label))
                }
            } catch {
                lost(target.deviceID, label: target.label, reason: "\(error)")
            }
        }
        return connected
    }

    private func lost(_ id: DeviceID, label: String, reason: String) {
        var entry = backoff[id] ?? RetryBackoff()
        let wait = entry.failed(at: .now)
        backoff[id] = entry
        schedule.requestPass(at: .now + wait)
        if reportedUnreachable.insert(id).inserted {
            log("\(label): unreachable (\(reason)); trying again with back-off, and at once when it appears on the network")
            emit(WatchLogEvent("unreachable", peer: label, message: reason))
        }
    }

    private func connect(_ target: WatchTargets.Target) async throws -> Peer {
        var address = target.address
        if address == nil {
            address = await PeerResolver.discover(target.deviceID, timeout: .seconds(3), localDeviceID: localDeviceID)
        }
        guard let address else { throw CommandFailure(message: "no address known and not found on the local network", exitCode: .peerUnavailable) }
        return try await sync.connect(to: address, expecting: target.deviceID, timeout: .seconds(5))
    }

    private func isConnected(_ id: DeviceID) async -> Bool {
        await sync.connectedPeers.contains { $0.deviceID == id }
    }

    // MARK: - Output

    private func log(_ line: String) {
        guard !json else { return }
        ServeCommand.logger(console)(line)
    }

    private func emit(_ event: WatchLogEvent) {
        guard json, let line = try? event.line() else { return }
        console.streamedResult(line)
    }

    /// The newest of a file's modification and change times, or 0 when it is gone.
    private static func lastChangeNs(_ path: String) -> Int64 {
        var raw = stat()
        guard lstat(path, &raw) == 0 else { return 0 }
        let status = FileStatus(raw)
        return max(status.modificationTimeNs, status.changeTimeNs)
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
