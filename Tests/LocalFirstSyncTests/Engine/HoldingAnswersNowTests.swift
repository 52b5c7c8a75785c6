import Foundation
import Testing
@testable import LFSyncFixtures
@testable import LocalFirstSync
@testable import LFSyncContent
@testable import LFSyncCrypto
@testable import LFSyncWire
@testable import LocalFirstSyncTesting

/// A holder answers a holding check from its library as it is when it answers
/// (PROTOCOL.md, "Holding checks"): what it received after an earlier check is held, and
/// so is a content it keeps under other names (a Live Photo stored as conflict copies),
/// found by the file hashes it recorded when the content arrived. Each case failed before
/// its fix: a received content was "held but changed since" until a 30 s old scan expired,
/// and conflict copies were never found.
@Suite(.timeLimit(.minutes(2))) struct HoldingAnswersNowTests {
    /// nas, answering holding checks from its library the way `serve` does, trusting the laptop.
    static func holder(_ root: URL, network: InMemoryNetwork, trusting laptop: TestDevice) async throws -> TestDevice {
        let nas = try TestDevice(name: "nas", root: root, transport: network.transport(host: "nas"), trusting: [laptop.identity])
        let library = nas.library, cache = nas.scanCache, chunks = nas.chunkIndex
        await nas.sync.serveHoldings(from: library) {
            (try? await LibraryScanner(root: library, cache: cache, chunkIndex: chunks).scan().assets) ?? []
        }
        try await nas.start(host: "nas")
        return nas
    }

    static func isProven(_ answer: HoldingAnswer?) -> Bool {
        if case .heldVerified(_, proven: true) = answer { true } else { false }
    }

    @Test func aContentReceivedAfterACheckIsHeldAtTheNextCheck() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let network = InMemoryNetwork()
            let laptop = try TestDevice(name: "laptop", root: root, transport: network.transport(host: "laptop"))
            let nas = try await Self.holder(root, network: network, trusting: laptop)
            try EngineHarness.writeSample(at: laptop.library, padding: 20_000)
            let assets = try await laptop.scan()
            let peer = try await laptop.sync.connect(to: nas.address, expecting: nas.identity.deviceID)
            // Asked before it has anything: not held (and the holder has looked at its library).
            let before = try await laptop.sync.checkHolding(of: assets, on: peer, proof: false)
            #expect(before.values.allSatisfy { $0 == .notHeld }, "\(before)")
            #expect(await laptop.sync.send(assets, from: laptop.library).waitUntilCompleted().map(\.state) == [.completed])
            // At once, with and without proof, and on a new connection.
            let proven = try await laptop.sync.checkHolding(of: assets, on: peer, proof: true)
            #expect(proven.values.allSatisfy(Self.isProven), "\(proven)")
            let word = try await laptop.sync.checkHolding(of: assets, on: peer, proof: false)
            #expect(word.values.allSatisfy { if case .heldVerified(_, proven: false) = $0 { true } else { false } }, "\(word)")
            await laptop.sync.disconnect(peer)
            let again = try await laptop.sync.connect(to: nas.address, expecting: nas.identity.deviceID)
            #expect(try await laptop.sync.checkHolding(of: assets, on: again, proof: true).values.allSatisfy(Self.isProven))
        }
    }

    /// An ISO BMFF `free` box: bytes a HEIC or MOV may carry without changing what it shows.
    static func freeBox(_ count: Int, fill: UInt8) -> [UInt8] {
        let size = UInt32(8 + count)
        return [UInt8(size >> 24), UInt8(size >> 16 & 0xff), UInt8(size >> 8 & 0xff), UInt8(size & 0xff)] + Array("free".utf8)
            + [UInt8](repeating: fill, count: count)
    }

    /// The nas has a Live Photo of its own at the laptop's names, paired by name (its files
    /// carry no content identifier, as many cameras' and older phones' do not): the laptop's
    /// goes beside it, each file under a conflict name of its own, which the scan cannot pair
    /// into the laptop's asset — it is found there by its recorded file hashes.
    @Test func aLivePhotoStoredAsConflictCopiesIsHeld() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let network = InMemoryNetwork()
            let laptop = try TestDevice(name: "laptop", root: root, transport: network.transport(host: "laptop"))
            let nas = try await Self.holder(root, network: network, trusting: laptop)
            for (device, fill) in [(laptop, UInt8(1)), (nas, UInt8(2))] {
                try TestSupport.write(MediaFixtures.liveStillHEIC(identifier: nil) + Self.freeBox(64, fill: fill),
                                      to: device.library.appendingPathComponent("DCIM/IMG_0008.HEIC"))
                try TestSupport.write(MediaFixtures.liveVideoMOV(identifier: nil) + Self.freeBox(64, fill: fill),
                                      to: device.library.appendingPathComponent("DCIM/IMG_0008.MOV"))
            }
            let assets = try await laptop.scan()
            let live = try #require(assets.first { $0.kind == .livePhoto })
            let peer = try await laptop.sync.connect(to: nas.address, expecting: nas.identity.deviceID)
            #expect(await laptop.sync.send(assets, from: laptop.library).waitUntilCompleted().map(\.state) == [.completed])
            let names = try FileManager.default.contentsOfDirectory(atPath: nas.library.appendingPathComponent("DCIM").path).sorted()
            // One suffix for the asset's two files (PROTOCOL.md, "Receiver rules"): its Content ID's.
            let conflicts = names.filter { $0.contains("(conflict ") }
            #expect(conflicts == ["IMG_0008 (conflict \(live.contentID.hash.hex.prefix(8))).HEIC",
                                  "IMG_0008 (conflict \(live.contentID.hash.hex.prefix(8))).MOV"], "\(names)")
            let answers = try await laptop.sync.checkHolding(of: [live], on: peer, proof: true)
            #expect(Self.isProven(answers[live.contentID]), "\(answers)")
        }
    }

    /// PROTOCOL.md, "Limits and deadlines": what one check with proof may make the holder
    /// read is bounded (unless it names one content), and the asker splits its question so
    /// that it never asks more.
    @Test func theBytesOneCheckMayReadAreBoundedAndTheAskerSplitsToFit() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let library = root.appendingPathComponent("nas")
            try EngineHarness.writeSample(at: library, padding: 10_000)
            let assets = try await LibraryScanner(root: library).scan().assets
            let big = Array(assets.sorted { $0.totalSize > $1.totalSize }.prefix(2))
            // Either alone fits; the two together do not.
            let limit = big[0].totalSize + big[1].totalSize - 1
            let responder = HoldingResponder(library: library, assets: { assets }, store: try SyncStateStore.inMemory(),
                                             holder: DeviceIdentity.generate().deviceID, proofByteLimit: limit)
            let nonce = Hash256(bytes: [UInt8](repeating: 1, count: 32))!
            let two = WireMessage.HoldingCheck(requestID: 1, contents: big.map(\.contentID), nonces: [nonce, nonce])
            guard case .overLimit = await responder.answers(to: two) else { Issue.record("two large contents were proven"); return }
            let one = WireMessage.HoldingCheck(requestID: 2, contents: [big[0].contentID], nonces: [nonce])
            guard case let .answers(answers) = await responder.answers(to: one), case .heldVerified(_, let proof?) = answers.first else {
                Issue.record("one content over the limit alone was not proven"); return
            }
            #expect(proof != nonce)
            // The asker: batches of at most 1,024 contents, and with proof within the byte limit.
            let batches = HoldingChecker.batches(of: assets, proof: true, byteLimit: limit)
            #expect(batches.flatMap { $0 } == assets)
            #expect(batches.count > 1)
            #expect(batches.allSatisfy { $0.count == 1 || $0.reduce(0) { $0 + $1.totalSize } <= limit })
            #expect(HoldingChecker.batches(of: assets, proof: false, byteLimit: limit).count == 1, "without proof, bytes do not count")
            #expect(HoldingChecker.batches(of: Array(repeating: assets[0], count: 2_500), proof: false).map(\.count) == [1_024, 1_024, 452])
        }
    }
}
