import Dispatch
import Foundation
import LocalFirstSync
import LFSyncSystem
import LFSyncCrypto
import LFSyncContent
import LFSyncStore
import LFSyncTransport
import LFSyncTCP
import LFSyncDiscovery

/// The engine's acceptance run: one device broadcasts a generated library to
/// three others over real TCP on loopback, in one process. Checks every
/// receiver byte-exact (by re-scanning it) and three `synced` ledger rows per
/// asset, and reports time, throughput and per-peer bytes.
struct BroadcastBenchmark {
    let corpusMiB: Int
    let workDirectory: URL

    func run() async throws {
        let root = workDirectory.appendingPathComponent("broadcast")
        try? FileManager.default.removeItem(at: root)
        let source = root.appendingPathComponent("laptop")
        _ = try CorpusWriter.photoLikeCorpus(at: source, totalBytes: UInt64(corpusMiB) << 20, seed: 11)
        let senderIdentity = DeviceIdentity.generate()
        let senderStore = try SyncStateStore.inMemory()
        let sender = LocalSync(identity: senderIdentity, store: senderStore, configuration: .init(deviceName: "laptop"))
        var receivers: [(name: String, library: URL, sync: LocalSync, id: DeviceID)] = []
        for name in ["nas", "desktop", "spare"] {
            let identity = DeviceIdentity.generate()
            let library = root.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: library, withIntermediateDirectories: true)
            let sync = LocalSync(
                identity: identity, store: try SyncStateStore.inMemory(),
                configuration: .init(deviceName: name, library: library,
                                     trust: TrustPolicy([.init(deviceID: senderIdentity.deviceID, acceptsOffers: true)])))
            let address = try await sync.start(listeningOn: PeerAddress(host: "127.0.0.1", port: 0), advertise: false)
            try await sender.connect(to: address, expecting: identity.deviceID)
            receivers.append((name, library, sync, identity.deviceID))
        }
        let scanStarted = DispatchTime.now()
        let assets = try await LibraryScanner(root: source).scan().assets
        let scanSeconds = Self.seconds(since: scanStarted)
        let total = assets.reduce(UInt64(0)) { $0 + $1.totalSize }

        let started = DispatchTime.now()
        let transfer = await sender.send(assets, from: source)
        var updatesPerPeer: [String: Int] = [:]
        for await update in transfer { updatesPerPeer[update.peer.name, default: 0] += 1 }
        let summaries = await transfer.waitUntilCompleted()
        let seconds = Self.seconds(since: started)

        let expected = Set(assets.flatMap { $0.files.map { "\($0.manifest.path) \($0.manifest.fileHash)" } })
        var allExact = true
        for receiver in receivers {
            let landed = try await LibraryScanner(root: receiver.library).scan().assets
            let files = Set(landed.flatMap { $0.files.map { "\($0.manifest.path) \($0.manifest.fileHash)" } })
            allExact = allExact && files == expected
        }
        var syncedRows = 0
        for receiver in receivers {
            syncedRows += try senderStore.contentIDs(in: .synced, for: PeerKey(rawValue: receiver.id.description)).count
        }
        print(String(format: "corpus: %d assets, %.1f MiB; scan %.2f s", assets.count, Double(total) / 1048576, scanSeconds))
        print("")
        print("| peer | state | chunk bytes sent | progress updates |")
        print("|---|---|---|---|")
        for summary in summaries {
            print("| \(summary.peer.name) | \(summary.state) | \(summary.chunkBytesSent) | \(updatesPerPeer[summary.peer.name] ?? 0) |")
        }
        print("")
        print(String(format: "3-peer broadcast over loopback TCP: %.2f s, %.0f MB/s per peer, %.0f MB/s total delivered",
                     seconds, Double(total) / seconds / 1e6, 3 * Double(total) / seconds / 1e6))
        print("byte-exact on all three: \(allExact ? "yes" : "NO"); synced ledger rows: \(syncedRows) (expected \(3 * assets.count))")
        await sender.stop()
        for receiver in receivers { await receiver.sync.stop() }
        guard allExact, syncedRows == 3 * assets.count, summaries.allSatisfy({ $0.state == .completed }) else {
            throw BenchmarkError("broadcast did not end byte-exact with every row synced")
        }
    }

    static func seconds(since start: DispatchTime) -> Double {
        Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
    }
}
