import Foundation
import Testing
@testable import LocalFirstSync

/// `watch` at a household's scale: 200,000 files in 2,000 folders, watched by a
/// process that may open at most 1,024 descriptors. Its own suite, because the
/// catch-up of a debug build takes minutes and `WatchTests` caps each test at three.
@Suite(.timeLimit(.minutes(20))) struct WatchScaleTests {
    typealias Watcher = WatchTests.Watcher

    static let folders = 2000
    static let filesPerFolder = 100

    /// Every folder gets an inotify watch (a watch needs no descriptor of its own, so the
    /// limit is never in play and there is no fallback), the catch-up sends all 200,000
    /// files, and a photo written after it still goes out at once.
    @Test func twoHundredThousandFilesUnderUlimit1024() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let (laptop, nas) = try await PushServeTests.pair(root)
            let total = Self.folders * Self.filesPerFolder
            for folder in 0..<Self.folders {
                let directory = laptop.library.appendingPathComponent(String(format: "%04d/%02d", 2000 + folder / 100, folder % 100))
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                for file in 0..<Self.filesPerFolder {
                    let bytes = Data("photo \(folder)-\(file) ".utf8 + Array(repeating: UInt8(truncatingIfNeeded: file), count: 300 + file * 7))
                    guard FileManager.default.createFile(atPath: directory.appendingPathComponent(String(format: "IMG_%04d.JPG", file)).path,
                                                         contents: bytes) else { throw PushServeTests.CommandError("cannot write the library") }
                }
            }
            let server = try await PushServeTests.Server(nas, openFileLimit: 1024)
            defer { _ = server.stop() }
            #expect(try await laptop.run(["trust", nas.deviceID(), "--name", "nas", "--address", server.address]).status == 0)
            let watcher = try Watcher(laptop, paths: [laptop.library], openFileLimit: 1024)
            defer { watcher.stop() }

            let stored = { watcher.all().filter { $0.event == "push" }.reduce(0) { $0 + ($1.stored ?? 0) } }
            // The loop reports `watching` when it next takes an event, which may be after the
            // catch-up's passes: wait for both.
            let events = try await watcher.waitUntil("the catch-up of \(total) files", seconds: 900) { events in
                stored() >= total && events.contains { $0.event == "watching" }
            }
            #expect(stored() == total)
            // Read now that the shell has long since set the limit and exec'd lfsync.
            let limits = try String(contentsOfFile: "/proc/\(watcher.process.processIdentifier)/limits", encoding: .utf8)
            #expect(limits.split(separator: "\n").contains { $0.hasPrefix("Max open files") && $0.split(separator: " ").contains("1024") },
                    "the watch runs under ulimit -n 1024: \(limits)")
            let watching = events.first { $0.event == "watching" }
            #expect(watching?.directories == Self.folders + Self.folders / 100 + 1, "every folder watched, the root included")
            #expect(!events.contains { $0.event == "fallback" || $0.event == "overflow" || $0.event == "error" },
                    "\(events.filter { $0.event != "push" }.map { "\($0.event): \($0.message ?? "")" })")
            #expect(Self.fileCount(under: nas.library) == total)

            let photo = Data("taken after the catch-up".utf8)
            try photo.write(to: laptop.library.appendingPathComponent("2019/99/IMG_9999.JPG"))
            try await WatchTests.eventually("the new photo on nas", seconds: 120) {
                WatchTests.contents(nas.library.appendingPathComponent("2019/99/IMG_9999.JPG")) == photo
            }
        }
    }

    /// Regular files below `root`, lfsync's own folder left out.
    static func fileCount(under root: URL) -> Int {
        guard let walk = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey]) else { return 0 }
        var count = 0
        for case let url as URL in walk {
            if url.lastPathComponent == ".lfsync" { walk.skipDescendants(); continue }
            if (try? url.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true { count += 1 }
        }
        return count
    }
}
