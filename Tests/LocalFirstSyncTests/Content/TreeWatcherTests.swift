import Foundation
import Synchronization
import Testing
import LFSyncContent

/// `TreeWatcher` against real directories: what `lfsync watch` learns, and what it must not.
///
/// Every wait is bounded (5 s) and ends as soon as its condition holds. That nothing was
/// reported is shown with a sentinel: the kernel queues events in order, so once a file
/// written after the change is reported, any event for the change would have come first.
@Suite struct TreeWatcherTests {
    /// Everything a watcher's stream said so far, read by a task of its own so waits can be bounded.
    final class Recorder: Sendable {
        struct Seen: Sendable {
            var events: [TreeWatcher.Event] = []
            var ended = false

            var directories: Set<String> {
                events.reduce(into: []) { all, event in
                    if case let .changed(directories, _) = event { all.formUnion(directories) }
                }
            }

            var files: Set<String> {
                events.reduce(into: []) { all, event in
                    if case let .changed(_, files) = event { all.formUnion(files) }
                }
            }
        }

        private let seen = LockedBox(Seen())
        private let reader: Task<Void, Never>

        init(_ watcher: TreeWatcher) {
            let stream = watcher.events()
            let seen = self.seen
            reader = Task {
                for await event in stream { seen.value.withLock { $0.events.append(event) } }
                seen.value.withLock { $0.ended = true }
            }
        }

        deinit { reader.cancel() }

        var snapshot: Seen { seen.value.withLock { $0 } }

        /// Waits until `condition` holds for what was seen, at most `seconds`; records an
        /// issue naming `what` and everything seen if it does not.
        @discardableResult
        func wait(
            for what: String, seconds: Int = 5, sourceLocation: SourceLocation = #_sourceLocation,
            until condition: (Seen) -> Bool
        ) async -> Bool {
            let deadline = ContinuousClock.now + .seconds(seconds)
            while true {
                let now = snapshot
                if condition(now) { return true }
                guard ContinuousClock.now < deadline else {
                    Issue.record("not within \(seconds) s: \(what); seen: \(now.events), ended: \(now.ended)", sourceLocation: sourceLocation)
                    return false
                }
                try? await Task.sleep(for: .milliseconds(5))
            }
        }

        /// Writes a sentinel file at the root and waits for it: every event queued before it has then arrived.
        func flush(root: URL, name: String = "sentinel", sourceLocation: SourceLocation = #_sourceLocation) async throws {
            try writeFile(root.appendingPathComponent(name))
            await wait(for: "the sentinel \(name)", sourceLocation: sourceLocation) { $0.files.contains(name) }
        }
    }

    static func makeDirectories(_ root: URL, _ paths: [String]) throws {
        for path in paths {
            try FileManager.default.createDirectory(at: root.appendingPathComponent(path), withIntermediateDirectories: true)
        }
    }

    @Test func aFileWrittenAtTheRootAndInANestedDirectoryIsReported() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            try Self.makeDirectories(root, ["2024/summer"])
            let watcher = TreeWatcher(rootPath: root.path)
            defer { watcher.stop() }
            let recorder = Recorder(watcher)
            await recorder.wait(for: "ready") { $0.events.first == .ready(watchedDirectories: 3) }
            #expect(watcher.watchedDirectoryCount == 3)

            try writeFile(root.appendingPathComponent("top.jpg"))
            try writeFile(root.appendingPathComponent("2024/summer/beach.jpg"))
            await recorder.wait(for: "both files") { seen in
                seen.files.isSuperset(of: ["top.jpg", "2024/summer/beach.jpg"])
                    && seen.directories.isSuperset(of: ["", "2024/summer"])
            }
            #expect(!recorder.snapshot.directories.contains("2024"), "nothing changed in 2024 itself")
        }
    }

    /// `mkdir -p a/b/c` and a file in c at once: they exist before c's watch does, so the walk
    /// that adds the watches must find them. Made certain by holding the watcher's thread
    /// (inside `isExcludedDirectory`, asked about "a" when its IN_CREATE arrives) until they exist.
    @Test func aNewDirectoryTreeIsWatchedAndWhatWasMadeInItBeforeIsFound() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let held = LockedBox(false)
            let release = DispatchSemaphore(value: 0)
            let watcher = TreeWatcher(rootPath: root.path) { path in
                if path == "a", held.value.withLock({ wasHeld in defer { wasHeld = true }; return !wasHeld }) {
                    _ = release.wait(timeout: .now() + 5)
                }
                return false
            }
            defer { watcher.stop() }
            let recorder = Recorder(watcher)
            await recorder.wait(for: "ready") { $0.events.first == .ready(watchedDirectories: 1) }

            try Self.makeDirectories(root, ["a"])
            await recorder.wait(for: "the watcher asking about a") { _ in held.value.withLock { $0 } }
            try Self.makeDirectories(root, ["a/b/c"])
            try writeFile(root.appendingPathComponent("a/b/c/first.jpg"))
            release.signal()
            await recorder.wait(for: "the new directories and the file made before their watches") { seen in
                seen.directories.isSuperset(of: ["", "a", "a/b", "a/b/c"]) && seen.files.contains("a/b/c/first.jpg")
            }
            await recorder.wait(for: "four watches") { _ in watcher.watchedDirectoryCount == 4 }

            try writeFile(root.appendingPathComponent("a/b/c/second.jpg"))
            await recorder.wait(for: "a file written in the new directory later") { $0.files.contains("a/b/c/second.jpg") }
        }
    }

    @Test func aDirectoryTreeMovedInIsWatchedAndFollowedWhenRenamedOrMovedOut() async throws {
        try await TestSupport.withTemporaryDirectory { scratch in
            let root = scratch.appendingPathComponent("library")
            let outside = scratch.appendingPathComponent("outside")
            try Self.makeDirectories(scratch, ["library", "outside/trip/day1"])
            try writeFile(outside.appendingPathComponent("trip/day1/photo.jpg"))
            let watcher = TreeWatcher(rootPath: root.path)
            defer { watcher.stop() }
            let recorder = Recorder(watcher)
            await recorder.wait(for: "ready") { $0.events.first == .ready(watchedDirectories: 1) }

            try FileManager.default.moveItem(at: outside.appendingPathComponent("trip"), to: root.appendingPathComponent("trip"))
            await recorder.wait(for: "the moved-in tree and the file it held") { seen in
                seen.directories.isSuperset(of: ["", "trip", "trip/day1"]) && seen.files.contains("trip/day1/photo.jpg")
            }
            try writeFile(root.appendingPathComponent("trip/day1/new.jpg"))
            await recorder.wait(for: "a file written in the moved-in tree") { $0.files.contains("trip/day1/new.jpg") }

            // Renamed inside the library: reported under the new name only.
            try FileManager.default.moveItem(at: root.appendingPathComponent("trip"), to: root.appendingPathComponent("holiday"))
            try writeFile(root.appendingPathComponent("holiday/day1/after-rename.jpg"))
            await recorder.wait(for: "a file written after the rename") { $0.files.contains("holiday/day1/after-rename.jpg") }
            #expect(!recorder.snapshot.files.contains("trip/day1/after-rename.jpg"))
            await recorder.wait(for: "three watches after the rename") { _ in watcher.watchedDirectoryCount == 3 }

            // Moved out: no longer watched, and what happens to it there is not reported.
            try FileManager.default.moveItem(at: root.appendingPathComponent("holiday"), to: outside.appendingPathComponent("holiday"))
            try writeFile(outside.appendingPathComponent("holiday/day1/elsewhere.jpg"))
            try await recorder.flush(root: root)
            let seen = recorder.snapshot
            #expect(!seen.files.contains { $0.hasSuffix("elsewhere.jpg") }, "\(seen.files)")
            await recorder.wait(for: "only the root watched") { _ in watcher.watchedDirectoryCount == 1 }
            // Followed move by move, not by the full rescan an overflow would demand.
            #expect(!recorder.snapshot.events.contains(.overflow))
        }
    }

    @Test func theStateFolderAndExcludedDirectoriesProduceNothing() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            try Self.makeDirectories(root, [".lfsync/staging", "cache/thumbs", "photos"])
            let asked = LockedBox<[String]>([])
            let watcher = TreeWatcher(rootPath: root.path) { path in
                asked.value.withLock { $0.append(path) }
                return path == "cache" || path == "photos/cache"
            }
            defer { watcher.stop() }
            let recorder = Recorder(watcher)
            await recorder.wait(for: "ready") { $0.events.first == .ready(watchedDirectories: 2) }
            let askedAbout = asked.value.withLock { $0 }
            #expect(askedAbout.contains("cache") && askedAbout.contains("photos"), "\(askedAbout)")
            #expect(!askedAbout.contains { $0.hasPrefix("/") || $0.hasPrefix(".lfsync") }, "\(askedAbout)")

            try writeFile(root.appendingPathComponent(".lfsync/staging/incoming.part"))
            try Self.makeDirectories(root, [".lfsync/new", "cache/more", "photos/cache"])
            try writeFile(root.appendingPathComponent("cache/thumbs/t.jpg"))
            try writeFile(root.appendingPathComponent("photos/cache/t.jpg"))
            try await recorder.flush(root: root)

            let seen = recorder.snapshot
            #expect(asked.value.withLock { $0 }.contains("photos/cache"), "asked about the new directory")
            #expect(seen.directories == [""], "\(seen.events)")
            #expect(seen.files == ["sentinel"], "\(seen.events)")
            #expect(watcher.watchedDirectoryCount == 2)
        }
    }

    @Test func aSymlinkedDirectoryIsNotFollowed() async throws {
        try await TestSupport.withTemporaryDirectory { scratch in
            let root = scratch.appendingPathComponent("library")
            try Self.makeDirectories(scratch, ["library", "elsewhere"])
            try FileManager.default.createSymbolicLink(at: root.appendingPathComponent("link"), withDestinationURL: scratch.appendingPathComponent("elsewhere"))
            let watcher = TreeWatcher(rootPath: root.path)
            defer { watcher.stop() }
            let recorder = Recorder(watcher)
            await recorder.wait(for: "ready") { $0.events.first == .ready(watchedDirectories: 1) }

            try writeFile(scratch.appendingPathComponent("elsewhere/private.jpg"))
            try await recorder.flush(root: root)
            #expect(recorder.snapshot.files == ["sentinel"])
        }
    }

    @Test func aDeletedDirectoryIsReportedInItsParentAndItsWatchDropped() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            try Self.makeDirectories(root, ["albums/old/deeper"])
            let watcher = TreeWatcher(rootPath: root.path)
            defer { watcher.stop() }
            let recorder = Recorder(watcher)
            await recorder.wait(for: "ready") { $0.events.first == .ready(watchedDirectories: 4) }

            try FileManager.default.removeItem(at: root.appendingPathComponent("albums/old"))
            await recorder.wait(for: "the parent") { $0.directories.contains("albums") }
            await recorder.wait(for: "the watches dropped") { _ in watcher.watchedDirectoryCount == 2 }
        }
    }

    @Test func moreDirectoriesThanMaxWatchesReportsTheLimitOnce() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            try Self.makeDirectories(root, ["a", "b", "c", "d"])
            let watcher = TreeWatcher(rootPath: root.path, maxWatches: 3)
            defer { watcher.stop() }
            let recorder = Recorder(watcher)
            await recorder.wait(for: "the limit") { $0.events.contains(.watchLimitReached(watched: 3)) }
            #expect(recorder.snapshot.events.first == .ready(watchedDirectories: 3))
            #expect(watcher.watchedDirectoryCount == 3)

            // A new directory is not watched, and the limit is not reported again.
            try Self.makeDirectories(root, ["e"])
            try writeFile(root.appendingPathComponent("e/photo.jpg"))
            try await recorder.flush(root: root)
            let limits = recorder.snapshot.events.filter { if case .watchLimitReached = $0 { true } else { false } }
            #expect(limits.count == 1)
            #expect(recorder.snapshot.directories.contains("e"), "an unwatched new directory is still reported once")
            #expect(watcher.watchedDirectoryCount == 3)
        }
    }

    @Test func stopEndsTheStreamAndIsIdempotent() async {
        await TestSupport.withTemporaryDirectory { root in
            let watcher = TreeWatcher(rootPath: root.path)
            let recorder = Recorder(watcher)
            await recorder.wait(for: "ready") { $0.events.first == .ready(watchedDirectories: 1) }
            watcher.stop()
            await recorder.wait(for: "the end of the stream") { $0.ended }
            #expect(watcher.watchedDirectoryCount == 0)
            watcher.stop()

            // After stop, a new stream is over at once.
            var iterator = watcher.events().makeAsyncIterator()
            #expect(await iterator.next() == nil)
        }
    }

    @Test func aSecondStreamIsAlreadyFinished() async {
        await TestSupport.withTemporaryDirectory { root in
            let watcher = TreeWatcher(rootPath: root.path)
            defer { watcher.stop() }
            let recorder = Recorder(watcher)
            var second = watcher.events().makeAsyncIterator()
            #expect(await second.next() == nil)
            await recorder.wait(for: "ready on the first") { $0.events.first == .ready(watchedDirectories: 1) }
        }
    }
}

/// A `Mutex` a closure can capture (a `Mutex` itself cannot be copied into one).
private final class LockedBox<Value: Sendable>: Sendable {
    let value: Mutex<Value>
    init(_ initial: Value) { value = Mutex(initial) }
}

private func writeFile(_ url: URL, _ text: String = "bytes") throws {
    try Data(text.utf8).write(to: url)
}
