import Foundation
import Testing
@testable import LocalFirstSync
@testable import LocalFirstSyncTesting

/// The quickstart (`Quickstart.swift`, compiled against `import LocalFirstSync` alone), run:
/// a laptop sends one scanned asset to two devices — no `from:`, the asset knows its
/// library — and asks the ledger what one of them lacks.
@Suite(.timeLimit(.minutes(2))) struct QuickstartTests {
    @Test func theQuickstartSendsAndTheLedgerSaysWhatIsMissing() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let (laptop, receivers) = try await LocalSyncTests.household(root, receivers: 2)
            try EngineHarness.writeSample(at: laptop.library, padding: 5_000)
            let assets = try await laptop.scan()
            let asset = try #require(assets.first)
            #expect(asset.library?.standardizedFileURL == laptop.library.standardizedFileURL, "a scanned asset knows its library")
            let peers = await laptop.sync.connectedPeers
            let ipad = try #require(peers.first { $0.deviceID == receivers[0].identity.deviceID })
            let mac = try #require(peers.first { $0.deviceID == receivers[1].identity.deviceID })

            let summaries = try await Quickstart.send(asset, with: laptop.sync, to: ipad, and: mac)
            #expect(summaries.count == 2 && summaries.allSatisfy { $0.state == .completed }, "\(summaries)")
            #expect(try await Quickstart.pending(in: laptop.store, for: ipad, of: assets.map(\.contentID)) == assets.dropFirst().map(\.contentID).filter { $0 != asset.contentID })

            // An asset no scan found cannot be sent without saying where it lives.
            let made = Asset(files: asset.files)
            await #expect(throws: SyncError.unknownLibrary(made.contentID)) { try await laptop.sync.send(made, to: [ipad]) }
        }
    }
}
