import Foundation
import Testing
@testable import LocalFirstSync
@testable import LFSyncStore
@testable import LFSyncContent

/// The `offloaded` table (what `lfsync offload` removed, with who held it) and the ledger
/// reads `whereis` and the holding check make.
@Suite struct OffloadedFilesTests {
    static let at = Date(timeIntervalSince1970: 1_764_930_000)

    static func row(_ path: String, content: Int, library: String = "/home/anna/Pictures") -> OffloadedFile {
        OffloadedFile(library: library, path: RelativePath(path), content: StoreFixtures.contentID(content), size: 1000,
                      holders: ["NAS-ID", "DESKTOP-ID"], at: at)
    }

    @Test func recordedRowsReadBackPerLibraryAndPerContent() throws {
        let store = try SyncStateStore.inMemory()
        try store.recordOffloaded([Self.row("b.jpg", content: 1), Self.row("a.heic", content: 2), Self.row("a.mov", content: 2),
                                   Self.row("x.jpg", content: 3, library: "/other")])
        let pictures = try store.offloaded(inLibrary: "/home/anna/Pictures")
        #expect(pictures.map(\.path.string) == ["a.heic", "a.mov", "b.jpg"])
        #expect(pictures[0].holders == ["NAS-ID", "DESKTOP-ID"] && pictures[0].size == 1000 && pictures[0].at == Self.at)
        #expect(try store.allOffloaded().count == 4)
        #expect(try store.offloadedContents(among: [StoreFixtures.contentID(2), StoreFixtures.contentID(9)]) == [StoreFixtures.contentID(2)])
    }

    @Test func aPathRecordedAgainReplacesItsRowAndForgettingRemovesOnlyThatPath() throws {
        let store = try SyncStateStore.inMemory()
        try store.recordOffloaded([Self.row("a.jpg", content: 1), Self.row("b.jpg", content: 2)])
        var again = Self.row("a.jpg", content: 5)
        again.holders = ["NAS-ID"]
        try store.recordOffloaded([again])
        #expect(try store.offloaded(inLibrary: "/home/anna/Pictures").first?.content == StoreFixtures.contentID(5))
        try store.forgetOffloaded(inLibrary: "/home/anna/Pictures", paths: [RelativePath("a.jpg")])
        #expect(try store.offloaded(inLibrary: "/home/anna/Pictures").map(\.path.string) == ["b.jpg"])
        #expect(try store.offloadedContents(among: [StoreFixtures.contentID(5)]).isEmpty)
    }

    @Test func entriesAndLastSyncedReadWhatTheLedgerSays() throws {
        let store = try SyncStateStore.inMemory()
        let (one, two, three) = (StoreFixtures.contentID(1), StoreFixtures.contentID(2), StoreFixtures.contentID(3))
        let early = Date(timeIntervalSince1970: 1_700_000_000), late = Date(timeIntervalSince1970: 1_700_000_500)
        try store.record(.synced, for: [one], peer: "nas", at: early)
        try store.record(.synced, for: [one], peer: "desktop", at: late)
        try store.record(.failed, for: [two], peer: "nas", reason: "disk full", at: early)
        let entries = try store.entries(of: [one, two, three], for: "nas")
        #expect(entries[one]?.state == .synced && entries[one]?.updatedAt == early)
        #expect(entries[two]?.state == .failed && entries[two]?.reason == "disk full")
        #expect(entries[three] == nil)
        // The latest confirmation anywhere; a failure is none.
        #expect(try store.lastSynced(of: [one, two, three]) == [one: late])
    }
}
