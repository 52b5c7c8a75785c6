import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import LFSyncFixtures
@testable import LocalFirstSync
@testable import LFSyncContent
import LFSyncSystem
import LFSyncCrypto
import LFSyncStore
import LFSyncTransport
import LFSyncTCP
import LFSyncDiscovery
import LFSyncWire

/// Libraries shaped like real ones (ARCHITECTURE.md, "Testing"), through real `lfsync
/// serve` and `push` processes: thousands of files, copies in several folders,
/// one edit preset shared by hundreds of photos, empty files, a hard link,
/// NFC/NFD twins, names with spaces, newlines and every script — at an open
/// file limit far below the number of files.
@Suite(.timeLimit(.minutes(3))) struct RealLibraryTests {
    typealias Device = PushServeTests.Device

    struct PushReport: Decodable {
        struct Peer: Decodable {
            var peer: String
            var state: String
            var assetsStored: Int
            var assetsFailed: Int
            var chunkBytesSent: UInt64
        }

        var assets: Int
        var peers: [Peer]
    }

    static let openFileLimit = 256

    @Test func aRealShapedLibraryArrivesWholeAtALowOpenFileLimit() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let (laptop, nas) = try await PushServeTests.pair(root)
            let summary = try RealisticLibrary.write(at: laptop.library, options: .init(fileCount: 5_000))
            #expect(summary.files >= 5_000)
            #expect(summary.duplicatePaths > 100 && summary.emptyFiles > 1)
            let server = try await PushServeTests.Server(nas, openFileLimit: Self.openFileLimit)
            defer { _ = server.stop() }
            #expect(try await laptop.run(["trust", nas.deviceID(), "--name", "nas", "--address", server.address]).status == 0)

            let started = ContinuousClock.now
            let push = try await laptop.run(["push", laptop.library.path, "--to", "nas", "--json"], openFileLimit: Self.openFileLimit)
            let elapsed = ContinuousClock.now - started
            #expect(push.status == 0, "push: \(push.stderr.suffix(2000))\nserve: \(server.stop().suffix(2000))")
            let report = try JSONDecoder().decode(PushReport.self, from: Data(push.stdout.utf8))
            let peer = try #require(report.peers.first)
            #expect(peer.state == "completed")
            #expect(peer.assetsStored == report.assets && peer.assetsFailed == 0)
            // Copies cross the wire once: far fewer bytes than the library holds.
            #expect(peer.chunkBytesSent < summary.bytes)
            print("real-shaped library: \(summary.files) files (\(summary.duplicatePaths) duplicate paths, \(summary.emptyFiles) empty), "
                  + "\(summary.bytes) B; \(report.assets) distinct assets, \(peer.chunkBytesSent) B sent, push took \(elapsed)")

            // Every file byte-exact at its path (paths compared as bytes), none missing, none extra.
            // The built-in ignore rules keep Finder's and Explorer's junk at home.
            let sent = try RawTree(laptop.library), received = try RawTree(nas.library)
            let junk = Set(sent.regularFiles.filter(RawTree.isDefaultExcluded))
            #expect(!junk.isEmpty, "the fixture should hold .DS_Store and Thumbs.db files")
            #expect(Set(received.regularFiles).isDisjoint(with: junk))
            let sentFiles = Set(sent.regularFiles).subtracting(junk), receivedFiles = Set(received.regularFiles)
            #expect(sentFiles.count + junk.count == summary.files)
            #expect(receivedFiles == sentFiles, "missing: \(sentFiles.subtracting(receivedFiles).prefix(5).map { String(decoding: $0, as: UTF8.self).debugDescription }), extra: \(receivedFiles.subtracting(sentFiles).prefix(5).map { String(decoding: $0, as: UTF8.self).debugDescription })")
            var mismatched: [String] = []
            for path in sentFiles where receivedFiles.contains(path) {
                if try sent.contents(of: path) != received.contents(of: path) { mismatched.append(String(decoding: path, as: UTF8.self)) }
            }
            #expect(mismatched.isEmpty, "differ: \(mismatched.prefix(5))")
            // Each file lands with the sender's permission bits under the receiver's umask (the test's, 022).
            let umask = ProcessUmask.current
            let wrongModes = sentFiles.filter { path in
                guard let mine = sent.entries[path], let theirs = received.entries[path] else { return false }
                return theirs.mode != mine.mode & 0o777 & ~umask
            }
            #expect(wrongModes.isEmpty, "modes differ: \(wrongModes.prefix(5).map { String(decoding: $0, as: UTF8.self) })")
            // Copies are copies: the sender's hard link arrives as two independent files.
            #expect(sent.entries.values.contains { $0.kind == .regular && $0.links > 1 })
            #expect(received.entries.values.allSatisfy { $0.kind != .regular || $0.links == 1 })
            // Nothing is left in staging.
            let staging = nas.library.appendingPathComponent(".lfsync/staging")
            #expect(try FileManager.default.contentsOfDirectory(atPath: staging.path).isEmpty)

            // Again, nothing changed: nothing moves, everything is confirmed.
            let again = try await laptop.run(["push", laptop.library.path, "--to", "nas", "--json"], openFileLimit: Self.openFileLimit)
            #expect(again.status == 0, "\(again.stderr.suffix(2000))")
            let repeated = try JSONDecoder().decode(PushReport.self, from: Data(again.stdout.utf8))
            #expect(repeated.peers.first?.chunkBytesSent == 0)
            #expect(repeated.peers.first?.assetsStored == report.assets)
        }
    }

    /// Nothing is dropped silently: every regular file is offered, listed under
    /// `skipped` with a reason (itself, or the folder it is in), or listed as `excluded`.
    @Test func everyFileIsOfferedOrListedAsSkipped() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let home = root.appendingPathComponent("state")
            let library = root.appendingPathComponent("library")
            try RealisticLibrary.write(at: library, options: .init(fileCount: 600))
            // What a scanner must not follow or cannot carry: a symlink, a FIFO, a name that is
            // not UTF-8, and a folder nested deeper than the protocol allows.
            try FileManager.default.createSymbolicLink(atPath: library.appendingPathComponent("link-out").path, withDestinationPath: "/etc")
            #expect(mkfifo(library.appendingPathComponent("a-fifo").path, 0o600) == 0)
            let latin1 = (Array(library.path.utf8) + Array("/caf".utf8) + [0xE9, 0]).map { CChar(bitPattern: $0) }
            let fd = open(latin1, O_WRONLY | O_CREAT, 0o644)
            #expect(fd >= 0)
            close(fd)
            var deep = library.appendingPathComponent("deep")
            for _ in 0...LibraryPath.maxComponents { deep.appendPathComponent("d") }
            try FileManager.default.createDirectory(at: deep, withIntermediateDirectories: true)
            try Data("too deep".utf8).write(to: deep.appendingPathComponent("buried.txt"))

            let scan = try await LFSyncProcess.run(["scan", library.path, "--json"], home: home)
            #expect(scan.status == 0, "\(scan.stderr)")
            let report = try JSONDecoder().decode(ScanJSON.self, from: Data(scan.stdout.utf8))
            let offered = Set(report.assets.flatMap { $0.files.map { Array($0.path.utf8) } })
            let skipped = Dictionary(report.skipped.map { (Array($0.path.utf8), $0.reason) }, uniquingKeysWith: { first, _ in first })
            #expect(skipped.values.allSatisfy { !$0.isEmpty })
            // What the ignore rules leave out is listed apart, never as something that could not be read.
            let excluded = Set(report.excluded.map { Array($0.utf8) })
            #expect(excluded.contains { RawTree.isDefaultExcluded($0) })
            #expect(Set(skipped.keys).isDisjoint(with: excluded))

            let tree = try RawTree(library)
            var unaccounted: [String] = []
            for (path, entry) in tree.entries where entry.kind != .directory {
                if offered.contains(path) { continue }
                // A name that is not UTF-8 is listed as it displays (with U+FFFD).
                if skipped[Array(String(decoding: path, as: UTF8.self).utf8)] != nil { continue }
                // So is a folder the scanner does not enter, once for everything in it.
                if skipped.keys.contains(where: { path.starts(with: $0 + [UInt8(ascii: "/")]) }) { continue }
                if excluded.contains(path) || excluded.contains(where: { $0.last == UInt8(ascii: "/") && path.starts(with: $0) }) { continue }
                unaccounted.append(String(decoding: path, as: UTF8.self).debugDescription)
            }
            #expect(unaccounted.isEmpty, "neither offered nor skipped: \(unaccounted.prefix(10))")
            // Offered means regular files only, each once.
            #expect(offered.allSatisfy { tree.entries[$0]?.kind == .regular })
            #expect(report.assets.flatMap(\.files).count == offered.count)
            #expect(skipped.keys.contains(Array("link-out".utf8)) && skipped.keys.contains(Array("a-fifo".utf8)))
        }
    }

    struct ScanJSON: Decodable {
        struct Asset: Decodable {
            struct File: Decodable { var path: String }
            var files: [File]
        }

        struct Skipped: Decodable {
            var path: String
            var reason: String
        }

        var assets: [Asset]
        var skipped: [Skipped]
        var excluded: [String]
    }
}
