import Foundation
import Testing
@testable import LFSyncFixtures
@testable import LocalFirstSync
@testable import LFSyncContent
@testable import LFSyncCrypto
@testable import LocalFirstSyncTesting

/// The holding check between two engines (PROTOCOL.md, "Holding checks"): answered, with
/// proofs, to a trusted device; refused to one the holder only let connect; a chunk sent
/// only to a device allowed to pull (PROTOCOL.md, "Who may read a device's bytes"), judged
/// when it is asked, and only if its bytes still hash right.
@Suite(.timeLimit(.minutes(2))) struct HoldingCheckTests {
    @Test func aTrustedDeviceGetsProvenAnswersAndAConnectedStrangerIsRefused() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let network = InMemoryNetwork()
            let laptop = try TestDevice(name: "laptop", root: root, transport: network.transport(host: "laptop"))
            let stranger = try TestDevice(name: "stranger", root: root, transport: network.transport(host: "stranger"))
            let nas = try TestDevice(name: "nas", root: root, transport: network.transport(host: "nas"), trusting: [laptop.identity])
            let nasLibrary = nas.library, nasIndex = nas.chunkIndex
            await nas.sync.serveHoldings(from: nasLibrary) {
                (try? await LibraryScanner(root: nasLibrary, chunkIndex: nasIndex).scan().assets) ?? []
            }
            try await nas.start(host: "nas")
            // The stranger is let in by a person's yes, but is not in the trust list.
            let consent = Task {
                for await request in nas.sync.connectionRequests() where request.isPending {
                    try? await request.accept()
                    return
                }
            }
            try EngineHarness.writeSample(at: laptop.library, padding: 100_000)
            try EngineHarness.writeSample(at: stranger.library, padding: 100_000)
            let assets = try await laptop.scan()
            let nasPeer = try await laptop.sync.connect(to: nas.address, expecting: nas.identity.deviceID)
            let summaries = await laptop.sync.send(assets, from: laptop.library).waitUntilCompleted()
            #expect(summaries.map(\.state) == [.completed])

            let answers = try await laptop.sync.checkHolding(of: assets, on: nasPeer, proof: true)
            #expect(answers.count == Set(assets.map(\.contentID)).count)
            #expect(answers.values.allSatisfy { if case .heldVerified(_, proven: true) = $0 { true } else { false } }, "\(answers)")
            // A content the nas never had.
            try TestSupport.write(Array("only on the laptop".utf8), to: laptop.library.appendingPathComponent("new.txt"))
            let fresh = try #require(try await laptop.scan().first { $0.primaryPath == "new.txt" })
            #expect(try await laptop.sync.checkHolding(of: [fresh], on: nasPeer, proof: true)[fresh.contentID] == .notHeld)
            // Reading bytes needs the permission to pull: trust alone answers checks, not chunk requests.
            let chunk = try #require(assets.flatMap(\.files).first { $0.manifest.size > 0 }?.manifest.chunks.first)
            do {
                _ = try await laptop.sync.fetchChunk(hash: chunk.hash, length: chunk.length, from: nasPeer)
                Issue.record("a device not allowed to pull read a chunk")
            } catch {
                #expect("\(error)".contains("not allowed to pull there"), "\(error)")
            }
            // Allowed now, on the same connection: a chunk of a file it holds, checked on arrival.
            await nas.sync.updateTrust(TrustPolicy([.init(deviceID: laptop.identity.deviceID, acceptsConnections: true, acceptsOffers: true, mayPull: true)]))
            #expect(try await laptop.sync.fetchChunk(hash: chunk.hash, length: chunk.length, from: nasPeer).map(ContentHash.chunk) == chunk.hash)

            let strangersNas = try await stranger.sync.connect(to: nas.address, expecting: nas.identity.deviceID)
            await consent.value
            let strangerAssets = try await stranger.scan()
            do {
                _ = try await stranger.sync.checkHolding(of: strangerAssets, on: strangersNas, proof: false)
                Issue.record("a device not in the trust list got answers")
            } catch {
                #expect("\(error)".contains("not trusted there"), "\(error)")
            }
            do {
                _ = try await stranger.sync.fetchChunk(hash: chunk.hash, length: chunk.length, from: strangersNas)
                Issue.record("a device not in the trust list got a chunk")
            } catch {
                #expect("\(error)".contains("not allowed to pull there"), "\(error)")
            }
        }
    }
}
