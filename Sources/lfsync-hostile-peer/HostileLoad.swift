import Foundation
import LocalFirstSync
import LFSyncSystem
import LFSyncCrypto
import LFSyncContent
import LFSyncStore
import LFSyncTransport
import LFSyncDiscovery
import Synchronization
import LFSyncTCP
import LFSyncWire

/// Attacks on availability rather than on the library: many connections, slow
/// ones, and a receiver that takes everything and answers nothing. Each prints
/// what it measured, one line, for the lab to check.
enum HostileLoad {
    /// Opens `count` bare TCP connections at once (more than a receiver at a low
    /// open-file limit can accept), holds them for `hold`, then drops them all.
    static func flood(_ target: PeerAddress, count: Int, hold: Duration) async -> String {
        let transport = TCPTransport(configuration: .init(connectTimeout: .seconds(5), idleTimeout: nil))
        var opened: [any Connection] = []
        var failed = 0
        for _ in 0..<count {
            do { opened.append(try await transport.connect(to: target)) } catch { failed += 1 }
        }
        try? await Task.sleep(for: hold)
        for connection in opened { await connection.close() }
        return "flood\topened \(opened.count), failed \(failed), held \(hold.components.seconds) s"
    }

    /// `silent` connections that never send a byte, plus (with a trusted key) one
    /// connection that, once accepted, starts a Noise message and then sends one
    /// byte of it every `trickleEvery`. Reports how long the target held each kind.
    static func hold(_ target: PeerAddress, silent: Int, trickle identity: DeviceIdentity?, expecting peer: DeviceID?,
                     trickleEvery: Duration, limit: Duration) async -> String {
        let transport = TCPTransport(configuration: .init(connectTimeout: .seconds(5), idleTimeout: limit))
        let clock = ContinuousClock()
        // The trusted connection first: once accepted it no longer counts against the caps
        // for strangers, which the silent ones from this same address are about to fill.
        var trickling: HostileConnection?
        var trickleLine = "trickle\tnot run"
        if let identity {
            do {
                switch try await HostileConnection.open(to: target, as: identity, expecting: peer) {
                case let .refused(answer): trickleLine = "trickle\tconnection refused: \(answer.summary)"
                case let .opened(connection): trickling = connection
                }
            } catch {
                trickleLine = "trickle\tcould not connect: \(error)"
            }
        }
        let start = clock.now
        async let silentResult: [Duration?] = withTaskGroup(of: Duration?.self) { group in
            for _ in 0..<silent {
                group.addTask {
                    let connection: any Connection
                    do throws(TransportError) { connection = try await transport.connect(to: target) } catch {
                        // Refused over a cap, the target resets at once: sometimes before our
                        // connect has returned. That is closed by the target too.
                        return error == .connectionReset ? ContinuousClock.now - start : nil
                    }
                    return await heldFor(connection, since: start, limit: limit)
                }
            }
            var out: [Duration?] = []
            for await result in group { out.append(result) }
            return out
        }
        if let trickling {
            let raw = trickling.channel.connection
            let began = clock.now
            // The length prefix of a 64-byte Noise message that is never finished.
            try? await raw.send([0, 64])
            let finished = AtomicFlag()
            let closed = Task {
                let held = await heldFor(raw, since: began, limit: limit)
                finished.set()
                return held
            }
            var sent = 0
            while sent < 63, !finished.isSet {
                try? await Task.sleep(for: trickleEvery)
                do { try await raw.send([0x55]) } catch { break }
                sent += 1
            }
            let held = await closed.value
            trickleLine = "trickle\t" + (held.map { "closed by the target after \(seconds($0)) s (\(sent) bytes trickled)" }
                ?? "still open after \(seconds(limit)) s")
        }
        let results = await silentResult
        let closed = results.compactMap { $0 }
        let longest = closed.max() ?? .zero
        let silentLine = "silent\t\(silent) opened, \(closed.count) closed by the target, the longest held \(seconds(longest)) s"
        return silentLine + "\n" + trickleLine
    }

    /// How long until the target closed `connection` (nil: still open at `limit`).
    private static func heldFor(_ connection: any Connection, since start: ContinuousClock.Instant, limit: Duration) async -> Duration? {
        let clock = ContinuousClock()
        while clock.now - start < limit {
            do throws(TransportError) {
                guard try await connection.receive() != nil else { return clock.now - start }
            } catch {
                if case .timedOut = error { continue }
                return clock.now - start
            }
        }
        await connection.close()
        return nil
    }

    /// A receiver that accepts a connection and its first offer (asking for
    /// every chunk), then reads and discards everything and answers nothing:
    /// no receipts, no Pongs — what a relay that swallows the stream looks
    /// like. Serves one connection, and reports when the sender hung up.
    static func stalledReceiver(on address: PeerAddress, as identity: DeviceIdentity, ready: @Sendable (PeerAddress) -> Void) async throws -> String {
        let transport = TCPTransport(configuration: .init(connectTimeout: .seconds(5), idleTimeout: nil))
        let listener = try await transport.listen(on: address)
        ready(listener.localAddress)
        let connection = try await listener.accept()
        await listener.close()
        let channel = try await SecureChannel.accept(over: connection, identity: identity)
        guard case .hello? = try await channel.receive() else { return "stalled-receiver\tno Hello" }
        try await channel.send(.hello(.init(protocolVersion: WireProtocol.version, deviceName: "stalled",
                                            softwareVersion: "hostile-peer", capabilities: [])))
        try await channel.send(.connectionDecision(.init(accepted: true, reason: nil)))
        let clock = ContinuousClock()
        var acceptedAt: ContinuousClock.Instant?
        var chunks = 0
        do {
            while let message = try await channel.receive() {
                switch message {
                case let .offer(offer) where acceptedAt == nil:
                    let needed = offer.assets.map { asset in
                        WireMessage.NeededChunks(contentID: asset.contentID, files: asset.files.enumerated().map { index, file in
                            .init(fileIndex: UInt16(index), chunks: .all(count: UInt32(file.manifest.chunks.count)))
                        })
                    }
                    try await channel.send(.offerReply(.init(offerID: offer.offerID, decision: .accepted, needed: needed)))
                    acceptedAt = clock.now
                case .chunk:
                    chunks += 1
                default:
                    continue  // swallowed: no receipts, no Pongs
                }
            }
        } catch {
            // The sender gave up on us: that is what is being measured.
        }
        let after = acceptedAt.map { seconds(clock.now - $0) } ?? "never accepted"
        return "stalled-receiver\tthe sender hung up \(after) s after the offer was accepted (\(chunks) chunks swallowed)"
    }

    /// "All but the last chunk, then Cancel", `count` times over one trusted
    /// connection, each time a new file of `chunks` 1 MiB chunks: what a
    /// consented peer would do to fill a receiver's staging area. Reports how
    /// many offers the target accepted (it must keep accepting: stale partials
    /// make room) and refused.
    static func cancelFlood(_ target: PeerAddress, as identity: DeviceIdentity, expecting peer: DeviceID?,
                            count: Int, chunks: Int) async throws -> String {
        guard case let .opened(connection) = try await HostileConnection.open(to: target, as: identity, expecting: peer) else {
            return "cancel-flood\tthe connection was not accepted"
        }
        let channel = connection.channel
        var accepted = 0, refused: [String] = [], sentBytes = 0
        for round in 0..<count {
            let offerID = UInt64(round + 1)
            let pieces = (0..<chunks).map { _ in HostilePayload.randomBytes(1 << 20) }
            let manifest = FileManifest(
                path: RelativePath("cancelled/\(round).bin"), size: UInt64(pieces.count << 20), modificationTimeNs: 0,
                chunks: pieces.map { ChunkRef(length: UInt32($0.count), hash: ContentHash.chunk($0)) })
            let asset = Asset(files: [.init(role: .primary, manifest: manifest)])
            try await channel.send(frames: [HostilePayload.offerFrame(offerID: offerID, assets: [asset])])
            let answer = await connection.answer(to: offerID, timeout: .seconds(30))
            guard case .accepted = answer else {
                refused.append(answer.summary)
                continue
            }
            accepted += 1
            for index in 0..<(chunks - 1) {
                try await channel.send(.chunk(.init(offerID: offerID, contentID: asset.contentID, fileIndex: 0,
                                                    chunkIndex: UInt32(index), payload: .raw(pieces[index][...]))))
                sentBytes += pieces[index].count
            }
            try await channel.send(.cancel(.init(offerID: offerID, reason: "all but the last chunk")))
            _ = await connection.answer(to: offerID, timeout: .seconds(30))  // the failed Receipt
        }
        await connection.close()
        let refusals = refused.isEmpty ? "" : " (\(refused.first ?? ""))"
        return "cancel-flood\t\(count) offers of \(chunks) MiB: \(accepted) accepted, \(refused.count) refused\(refusals); \(sentBytes >> 20) MiB left behind by Cancel"
    }

    static func seconds(_ duration: Duration) -> String {
        String(format: "%.1f", Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
    }
}
