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
            #expect(names.filter { $0.contains("(conflict ") }.count == 2, "\(names)")
            let answers = try await laptop.sync.checkHolding(of: [live], on: peer, proof: true)
            #expect(Self.isProven(answers[live.contentID]), "\(answers)")
        }
    }
}
