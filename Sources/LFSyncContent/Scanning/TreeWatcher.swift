import Dispatch
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import LFSyncSystem

/// Watches every directory of a library tree with inotify and says which ones changed:
/// the watching half of `lfsync watch`, which rescans only those directories.
///
/// Why inotify on a thread of its own: the kernel tells within milliseconds which
/// directory an entry changed in, and a thread blocked in `poll(2)` costs no CPU while
/// nothing happens — a periodic rescan of 200,000 files costs seconds of I/O each time and
/// still reports late. The thread never runs on Swift's cooperative pool, which a blocking
/// call would starve.
///
/// What is watched: the root and every directory under it, never through a symlink, except
/// a top-level `.lfsync` (lfsync's own state) and whatever `isExcludedDirectory` names.
/// Each watch costs the kernel about a kilobyte and this object one dictionary entry
/// (watch descriptor → relative path). The kernel limits watches per user
/// (`fs.inotify.max_user_watches`); when it refuses one, or `maxWatches` would be passed,
/// the stream says `.watchLimitReached` once and no further watches are added: the caller
/// then rescans periodically, as it would without a watcher.
///
/// Changes are coalesced: what arrives while the consumer is busy is merged into one
/// pending `.changed`, so a slow consumer costs memory bounded by the tree's size, not by
/// the number of events.
///
/// Keep the watcher alive while reading its stream: its `deinit` stops it.
package final class TreeWatcher: Sendable {
    public enum Event: Sendable, Equatable {
        /// First, once the initial watches are in place: a change made after this is reported.
        case ready(watchedDirectories: Int)
        /// Entries were added, removed or changed in `directories` (library-relative, "" for
        /// the root). A directory that appeared (created, or moved in) is listed itself, with
        /// every directory under it: files made in it before its watch was set are found by
        /// rescanning it. One that vanished is not listed; its parent is.
        /// `files`: the entries the kernel named (and those found in new directories), for
        /// logging and settle tracking; at most `maxReportedFiles` per event.
        case changed(directories: Set<String>, files: Set<String>)
        /// The kernel's queue overflowed (or the root itself moved, was deleted or unmounted):
        /// events were lost, so everything must be rescanned. The watches have been renewed by
        /// walking `rootPath` again (nothing is watched, `watchedDirectoryCount` 0, if it is gone).
        case overflow
        /// The kernel refused a watch (or `maxWatches` was reached): `watched` directories are
        /// watched, the rest are not, and no more watches will be added. Reported once.
        case watchLimitReached(watched: Int)
    }

    /// How many file names one `.changed` carries at most: a copy of 200,000 files into the
    /// library must not hold 200,000 names in memory while the consumer is busy. The
    /// directories are always complete; rescanning them finds every file.
    public static let maxReportedFiles = 10_000

    public let rootPath: String
    private let core: Core

    /// - Parameters:
    ///   - maxWatches: at most this many directories are watched (nil: as many as the kernel allows).
    ///   - isExcludedDirectory: called on the watcher's thread with a library-relative path
    ///     ("a/b", no leading slash) before a directory is watched; true keeps it, and
    ///     everything under it, unwatched. A top-level `.lfsync` is always excluded.
    public init(
        rootPath: String, maxWatches: Int? = nil,
        isExcludedDirectory: @escaping @Sendable (_ relativePath: String) -> Bool = { _ in false }
    ) {
        self.rootPath = rootPath
        core = Core(rootPath: rootPath, maxWatches: maxWatches, isExcluded: isExcludedDirectory)
    }

    deinit {
        core.stop(waitForThread: true)
    }

    /// The events, starting with `.ready`. The first call starts the watcher's thread; the
    /// stream is for one consumer, so a second call (or a call after `stop()`) returns a
    /// stream that is already finished.
    ///
    /// The stream ends on `stop()`, when its consumer is cancelled (which also stops the
    /// watcher), or if reading from the kernel fails (never seen; treat an end you did not
    /// ask for like `.watchLimitReached`). If no inotify instance can be had at all
    /// (`fs.inotify.max_user_instances`), it says `.ready(watchedDirectories: 0)` then
    /// `.watchLimitReached(watched: 0)`.
    public func events() -> AsyncStream<Event> {
        guard core.start() else { return AsyncStream { $0.finish() } }
        let core = self.core
        return AsyncStream(unfolding: {
            await core.pending.wait(orIfCancelled: Event?.none, until: { $0.take() })
        }, onCancel: {
            core.stop(waitForThread: false)
        })
    }

    /// Ends the stream (what was pending is dropped), wakes the thread and waits until it has
    /// closed its descriptors: a watcher stopped is one inotify instance of the user's few
    /// (`max_user_instances`) given back. Idempotent. Blocks only until the thread notices,
    /// which is at most one directory of a walk; from the watcher's own thread (inside
    /// `isExcludedDirectory`) it does not wait.
    public func stop() {
        core.stop(waitForThread: true)
    }

    /// Directories watched right now (0 before the walk and after `stop()`).
    public var watchedDirectoryCount: Int {
        core.watchedCount.load(ordering: .relaxed)
    }
}

extension TreeWatcher {
    /// The events the consumer has not taken yet, merged.
    fileprivate struct Pending: Sendable {
        /// Nothing is delivered before `.ready`, though a limit can be met during the first walk.
        var ready: Int?
        var readyPublished = false
        var limit: Int?
        var overflow = false
        var directories: Set<String> = []
        var files: Set<String> = []
        var finished = false

        /// The next event (`.some(nil)`: the stream is over), or nil to wait. Order: ready,
        /// limit, overflow, then changes — the consumer acts on each the same whichever came first.
        mutating func take() -> Event?? {
            if finished { return .some(nil) }
            guard readyPublished else { return nil }
            if let count = ready {
                ready = nil
                return .ready(watchedDirectories: count)
            }
            if let watched = limit {
                limit = nil
                return .watchLimitReached(watched: watched)
            }
            if overflow {
                overflow = false
                return .overflow
            }
            guard !directories.isEmpty || !files.isEmpty else { return nil }
            defer {
                directories = []
                files = []
            }
            return .changed(directories: directories, files: files)
        }
    }

    fileprivate struct Lifecycle: Sendable {
        enum Phase { case idle, running, stopped }
        var phase = Phase.idle
        /// Held here only so `stop()` can wake the thread; the thread holds its own reference,
        /// and the descriptors close when both are gone.
        var inotify: Inotify?
        var threadStarted = false
    }

    /// What the public object and its thread share. The thread's own state (the watch map)
    /// is in `Worker`, which only the thread touches.
    fileprivate final class Core: Sendable {
        let rootPath: String
        let maxWatches: Int?
        let isExcluded: @Sendable (String) -> Bool
        let pending = Monitor(Pending())
        let watchedCount = Atomic<Int>(0)
        let lifecycle = LockedState(Lifecycle())
        let stopRequested = AtomicFlag()
        /// Signalled when the thread has returned and dropped its descriptors; a latch:
        /// every waiter signals it again for the next.
        let exited = DispatchSemaphore(value: 0)
        /// `pthread_self()` of the watcher's thread, so a `stop()` from that thread (from
        /// inside `isExcluded`) does not wait for itself.
        let threadID = Atomic<UInt>(0)

        init(rootPath: String, maxWatches: Int?, isExcluded: @escaping @Sendable (String) -> Bool) {
            self.rootPath = rootPath
            self.maxWatches = maxWatches
            self.isExcluded = isExcluded
        }

        /// Starts the thread; false if already started or stopped.
        func start() -> Bool {
            let outcome: Result<Inotify, SystemError>? = lifecycle.withLock { state in
                guard state.phase == .idle else { return nil }
                state.phase = .running
                do throws(SystemError) {
                    let inotify = try Inotify()
                    state.inotify = inotify
                    state.threadStarted = true
                    return .success(inotify)
                } catch {
                    return .failure(error)
                }
            }
            switch outcome {
            case nil:
                return false
            case .failure:
                // No instance (EMFILE at max_user_instances, ENOMEM): nothing can be watched.
                pending.withLock { pending in
                    pending.ready = 0
                    pending.readyPublished = true
                    pending.limit = 0
                }
                return true
            case .success:
                let thread = Thread { [self] in
                    // Named from inside: a name given before `start()` stays a Foundation property
                    // on Linux and never reaches the kernel (checked: /proc/<pid>/task/*/comm and
                    // `top -H` showed the process's name), which is where one looks for a busy thread.
                    Thread.current.name = "lfsync-watch"
                    threadID.store(UInt(pthread_self()), ordering: .releasing)
                    runWorker()
                    exited.signal()
                }
                thread.start()
                return true
            }
        }

        /// In a function of its own so the worker and its `Inotify` are released when it
        /// returns, before `exited` is signalled.
        private func runWorker() {
            guard let inotify = lifecycle.withLock({ $0.inotify }) else { return }
            var worker = Worker(core: self, inotify: inotify)
            worker.run()
            watchedCount.store(0, ordering: .relaxed)
        }

        func stop(waitForThread: Bool) {
            stopRequested.set()
            let mustWait = wakeAndRelease() && waitForThread
                && threadID.load(ordering: .acquiring) != UInt(pthread_self())
            pending.withLock { $0.finished = true }
            if mustWait {
                exited.wait()
                exited.signal()
            }
        }

        /// Drops this side's reference to the instance and wakes the thread; true if a
        /// thread was ever started.
        private func wakeAndRelease() -> Bool {
            let (inotify, started) = lifecycle.withLock { state -> (Inotify?, Bool) in
                state.phase = .stopped
                defer { state.inotify = nil }
                return (state.inotify, state.threadStarted)
            }
            inotify?.wake()
            return started
        }

        func publishReady(_ count: Int) {
            pending.withLock { pending in
                pending.ready = count
                pending.readyPublished = true
            }
        }

        func publishLimit(_ watched: Int) {
            pending.withLock { $0.limit = watched }
        }

        func publish(_ batch: Batch) {
            guard batch.overflow || !batch.directories.isEmpty || !batch.files.isEmpty else { return }
            pending.withLock { pending in
                guard !pending.finished else { return }
                if batch.overflow {
                    // Everything is rescanned for the overflow: what was pending is covered.
                    pending.overflow = true
                    pending.directories = []
                    pending.files = []
                }
                pending.directories.formUnion(batch.directories)
                for file in batch.files where pending.files.count < TreeWatcher.maxReportedFiles {
                    pending.files.insert(file)
                }
            }
        }

        /// Reading from the kernel failed: the stream ends so the caller does not believe
        /// it is still watched.
        func finish() {
            pending.withLock { $0.finished = true }
        }
    }

    /// What one wake-up of the thread found.
    fileprivate struct Batch {
        var directories: Set<String> = []
        var files: Set<String> = []
        var overflow = false

        mutating func addFile(_ path: String) {
            if files.count < TreeWatcher.maxReportedFiles { files.insert(path) }
        }
    }
}

extension TreeWatcher {
    /// The thread's side: the watch map and the walks that fill it.
    private struct Worker {
        /// The events asked for: every way an entry can appear, vanish or change (a file
        /// written is seen when it is closed, and while it is written for settle tracking),
        /// and the directory itself moving or going. IN_EXCL_UNLINK: nothing for files that
        /// were deleted but are still open.
        static let mask = InotifyMask.closeWrite | InotifyMask.movedTo | InotifyMask.movedFrom
            | InotifyMask.create | InotifyMask.delete | InotifyMask.attrib | InotifyMask.modify
            | InotifyMask.deleteSelf | InotifyMask.moveSelf | InotifyMask.excludeUnlinked
            | InotifyMask.onlyDirectory

        /// As deep as the scanner walks (`DirectoryWalker.maxDepth`): deeper directories
        /// are never synced, so not watched.
        static let maxDepth = 128

        /// How many more reads one wake-up drains before reporting: a steady stream of
        /// events must not keep the first of them from the consumer.
        static let maxDrainReads = 16

        let core: Core
        let inotify: Inotify
        /// Watch descriptor → library-relative path: the only per-directory memory.
        var paths: [Int32: String] = [:]
        var limitReached = false
        var limitReported = false
        /// Watches are added through `/proc/self/fd/N` of a directory opened with
        /// `O_NOFOLLOW`, when /proc is there: a path would be resolved again by the kernel,
        /// and `IN_DONT_FOLLOW` guards only its last component, so a parent swapped for a
        /// symlink in between could get a directory outside the library watched.
        let watchesThroughDescriptor: Bool

        init(core: Core, inotify: Inotify) {
            self.core = core
            self.inotify = inotify
            watchesThroughDescriptor = access("/proc/self/fd", F_OK) == 0
        }

        mutating func run() {
            guard !core.stopRequested.isSet else { return }
            watchEverything()
            core.publishReady(paths.count)
            while !core.stopRequested.isSet {
                var batch = Batch()
                do throws(SystemError) {
                    // Blocks with no timeout: an idle tree costs no CPU.
                    let events = try inotify.readEvents(timeout: nil)
                    if core.stopRequested.isSet { break }
                    if events.isEmpty { continue }
                    handle(events, into: &batch)
                    var reads = 0
                    while reads < Self.maxDrainReads, !core.stopRequested.isSet {
                        let more = try inotify.readEvents(timeout: .zero)
                        if more.isEmpty { break }
                        handle(more, into: &batch)
                        reads += 1
                    }
                } catch {
                    core.finish()
                    return
                }
                if batch.overflow { watchEverything() }
                core.publish(batch)
            }
        }

        /// Walks the whole tree and keeps exactly the watches it found: the first walk, and
        /// the renewal after an overflow, whose lost events may have included new directories
        /// (never watched) and `IN_IGNORED`s (entries for watches that are gone).
        private mutating func watchEverything() {
            let previous = paths
            paths = [:]
            limitReached = false
            if let root = openDirectory(relative: "") {
                var visited: Set<Int32> = []
                var found: Found? = nil
                watchTree(descriptor: root, relative: "", depth: 0, visited: &visited, found: &found)
            }
            for watch in previous.keys where paths[watch] == nil {
                // EINVAL: already gone.
                try? inotify.removeWatch(watch)
            }
            publishCount()
        }

        private mutating func handle(_ events: [InotifyEvent], into batch: inout Batch) {
            for event in events {
                if core.stopRequested.isSet { return }
                handle(event, into: &batch)
            }
        }

        private mutating func handle(_ event: InotifyEvent, into batch: inout Batch) {
            if event.has(InotifyMask.queueOverflow) {
                batch.overflow = true
                return
            }
            // Unknown: a watch already removed (moved away) whose events were still queued.
            guard let directory = paths[event.watch] else { return }
            if event.has(InotifyMask.ignored) {
                paths[event.watch] = nil
                publishCount()
                return
            }
            if event.has(InotifyMask.unmount) {
                batch.overflow = true
                return
            }
            if event.has(InotifyMask.moveSelf) {
                // A moved subdirectory is normally unwatched on its parent's IN_MOVED_FROM,
                // which the kernel queues first. Still mapped: the root, or a directory whose
                // parent was not watched; either way its paths are now wrong.
                batch.overflow = true
                return
            }
            if event.has(InotifyMask.deleteSelf) {
                // IN_IGNORED follows; the parent reports the deletion itself. The root gone
                // means the library is gone: a rescan says so.
                if directory.isEmpty { batch.overflow = true }
                return
            }
            guard !event.name.isEmpty else {
                batch.directories.insert(directory)
                return
            }
            // lfsync's own state never shows, not even its folder appearing.
            if directory.isEmpty, event.name == Self.stateDirectoryName { return }
            // Names that are not UTF-8 are never synced (the scanner skips them); their
            // directory still changed.
            guard let name = String(validating: event.name, as: UTF8.self) else {
                batch.directories.insert(directory)
                return
            }
            let child = Self.join(directory, name)
            guard event.has(InotifyMask.isDirectory) else {
                batch.directories.insert(directory)
                batch.addFile(child)
                return
            }
            if core.isExcluded(child) { return }
            batch.directories.insert(directory)
            if event.has(InotifyMask.movedFrom) {
                // Its watches would go on reporting under the old paths, from wherever it went
                // (perhaps outside the library): removed, and added again if it reappears here.
                unwatchSubtree(child)
            }
            if event.has(InotifyMask.create | InotifyMask.movedTo) {
                watchNewDirectory(child, into: &batch)
            }
        }

        /// A directory created or moved in: watched with everything under it, and reported
        /// with everything found in it, since entries made before its watch was set have
        /// sent no events.
        private mutating func watchNewDirectory(_ relative: String, into batch: inout Batch) {
            let depth = relative.utf8.reduce(1) { $1 == UInt8(ascii: "/") ? $0 + 1 : $0 }
            guard depth < Self.maxDepth else { return }
            guard !limitReached, let descriptor = openDirectory(relative: relative) else {
                // Unwatched (limit) or already gone: a rescan of it shows which.
                batch.directories.insert(relative)
                return
            }
            var visited: Set<Int32> = []
            var found: Found? = Found()
            watchTree(descriptor: descriptor, relative: relative, depth: depth, visited: &visited, found: &found)
            batch.directories.insert(relative)
            if let found {
                batch.directories.formUnion(found.directories)
                for file in found.files { batch.addFile(file) }
            }
            publishCount()
        }

        /// Removes the watches of `relative` and every directory under it. Compared by UTF-8
        /// bytes: `String`'s `==` and `hasPrefix` treat NFC and NFD spellings as equal, and
        /// on Linux those are two different directories.
        private mutating func unwatchSubtree(_ relative: String) {
            let prefix = Array(relative.utf8) + [UInt8(ascii: "/")]
            let doomed = paths.compactMap { watch, path -> Int32? in
                let bytes = path.utf8
                if bytes.elementsEqual(relative.utf8) || bytes.starts(with: prefix) { return watch }
                return nil
            }
            for watch in doomed {
                try? inotify.removeWatch(watch)
                paths[watch] = nil
            }
            publishCount()
        }

        /// What a walk of a new directory found, to report.
        private struct Found {
            var directories: [String] = []
            var files: [String] = []
        }

        /// Watches the directory open as `descriptor` (taken over and closed) and, depth
        /// first, every directory under it.
        ///
        /// The watch is added before the directory is listed: a subdirectory made after the
        /// listing then sends IN_CREATE, and one made before is in the listing. `visited`
        /// holds the watches of this walk: the kernel returns the same descriptor for an inode
        /// already watched, so a directory reached twice (a bind mount of a parent) is
        /// walked once.
        private mutating func watchTree(
            descriptor: Int32, relative: String, depth: Int, visited: inout Set<Int32>, found: inout Found?
        ) {
            guard !core.stopRequested.isSet, !limitReached else {
                close(descriptor)
                return
            }
            if let maxWatches = core.maxWatches, paths.count >= maxWatches {
                close(descriptor)
                reachLimit()
                return
            }
            let watch: Int32
            do throws(SystemError) {
                if watchesThroughDescriptor {
                    // Followed on purpose (no IN_DONT_FOLLOW): the magic link leads to exactly
                    // the directory opened.
                    watch = try inotify.addWatch(path: "/proc/self/fd/\(descriptor)", mask: Self.mask)
                } else {
                    let path = relative.isEmpty ? core.rootPath : core.rootPath + "/" + relative
                    watch = try inotify.addWatch(path: path, mask: Self.mask | InotifyMask.dontFollow)
                }
            } catch {
                close(descriptor)
                // Other failures concern this directory alone (EACCES: it cannot be read, nor
                // synced, either); the walk goes on without it.
                if error.isWatchLimit { reachLimit() }
                return
            }
            guard visited.insert(watch).inserted else {
                close(descriptor)
                return
            }
            let known = paths[watch].map { $0.utf8.elementsEqual(relative.utf8) } ?? false
            paths[watch] = relative
            if !known { found?.directories.append(relative) }
            if paths.count % 256 == 0 { publishCount() }

            guard let stream = fdopendir(descriptor) else {
                close(descriptor)
                return
            }
            defer { closedir(stream) }
            let directoryDescriptor = dirfd(stream)
            var subdirectories: [(name: [UInt8], relative: String)] = []
            while let entry = readdir(stream) {
                let rawName = DirectoryEntryName.bytes(of: entry)
                if rawName == [UInt8(ascii: ".")] || rawName == [UInt8(ascii: "."), UInt8(ascii: ".")] { continue }
                if relative.isEmpty, rawName == Self.stateDirectoryName { continue }
                let isDirectory: Bool
                switch Int(entry.pointee.d_type) {
                case Int(DT_DIR): isDirectory = true
                case Int(DT_UNKNOWN):
                    // Some file systems leave the type out of the listing; ask without following.
                    var status = stat()
                    let result = Self.withCName(rawName) { fstatat(directoryDescriptor, $0, &status, AT_SYMLINK_NOFOLLOW) }
                    isDirectory = result == 0 && (status.st_mode & S_IFMT) == S_IFDIR
                default: isDirectory = false
                }
                guard let name = String(validating: rawName, as: UTF8.self) else { continue }
                let child = Self.join(relative, name)
                if isDirectory {
                    guard depth + 1 < Self.maxDepth, !core.isExcluded(child) else { continue }
                    subdirectories.append((rawName, child))
                } else if found != nil, (found?.files.count ?? 0) < TreeWatcher.maxReportedFiles {
                    found?.files.append(child)
                }
            }
            for subdirectory in subdirectories {
                if core.stopRequested.isSet || limitReached { return }
                let child = Self.openat(directoryDescriptor, subdirectory.name)
                // Gone, or swapped for a symlink (ELOOP) since the listing: not followed.
                guard child >= 0 else { continue }
                watchTree(descriptor: child, relative: subdirectory.relative, depth: depth + 1, visited: &visited, found: &found)
            }
        }

        private mutating func reachLimit() {
            limitReached = true
            guard !limitReported else { return }
            limitReported = true
            publishCount()
            core.publishLimit(paths.count)
        }

        private func publishCount() {
            core.watchedCount.store(paths.count, ordering: .relaxed)
        }

        /// Opens a directory of the library one component at a time, none followed if it is a
        /// symlink. Opened afresh each time, never kept: a descriptor held on the root would
        /// keep its file system from being unmounted (an external drive could not be ejected).
        private func openDirectory(relative: String) -> Int32? {
            var descriptor = open(core.rootPath, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard descriptor >= 0 else { return nil }
            guard !relative.isEmpty else { return descriptor }
            for component in relative.utf8.split(separator: UInt8(ascii: "/")) {
                let next = Self.openat(descriptor, Array(component))
                close(descriptor)
                guard next >= 0 else { return nil }
                descriptor = next
            }
            return descriptor
        }

        private static func openat(_ directory: Int32, _ name: [UInt8]) -> Int32 {
            withCName(name) { Glibc.openat(directory, $0, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
        }

        /// `name` as a C string: names stay bytes from `readdir` to the system call, so one
        /// that is not UTF-8 can still be opened (and a String round trip cannot alter it).
        private static func withCName(_ name: [UInt8], _ body: (UnsafePointer<CChar>) -> Int32) -> Int32 {
            var terminated = name
            terminated.append(0)
            return terminated.withUnsafeBufferPointer { buffer in
                guard let base = buffer.baseAddress else { return -1 }
                return base.withMemoryRebound(to: CChar.self, capacity: buffer.count, body)
            }
        }

        private static let stateDirectoryName = Array(LibraryLayout.stateDirectoryName.utf8)

        private static func join(_ directory: String, _ name: String) -> String {
            directory.isEmpty ? name : directory + "/" + name
        }
    }
}
