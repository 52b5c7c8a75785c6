#if canImport(Glibc)
import Glibc
#endif

/// One inotify instance and the pipe that interrupts a wait on it: the kernel half of
/// `lfsync watch`, which must learn within a fraction of a second that a folder changed
/// and cost nothing while nothing does.
///
/// Why a blocking `poll(2)` on two descriptors rather than a non-blocking read in a loop:
/// an idle library then costs no CPU at all (no timer wakes the thread), and the second
/// descriptor, a pipe, lets another thread end the wait at once (`wake()`, for shutdown)
/// without a timeout to wait out.
///
/// Sendable without `@unchecked`: every stored property is an immutable descriptor number,
/// and the kernel serialises the calls made on them. Both are closed only in `deinit`, when
/// no other reference can still call `wake()`: a `close()` method would let a late `wake()`
/// write into whatever file had meanwhile been given the same number.
package final class Inotify: Sendable {
    private let descriptor: Int32
    private let wakeReadEnd: Int32
    private let wakeWriteEnd: Int32

    /// Room for a few thousand events per `read`. The kernel refuses (EINVAL) a buffer that
    /// cannot hold one event with the longest name (16 + NAME_MAX + 1 bytes); this one always can.
    package static let readBufferSize = 64 * 1024

    /// Size of `struct inotify_event` before its name: wd, mask, cookie, len (4 bytes each).
    package static let headerSize = 16

    /// `inotify_init1(IN_NONBLOCK | IN_CLOEXEC)` and a wake-up pipe.
    ///
    /// Errors: EMFILE when the per-user instance limit (`fs.inotify.max_user_instances`,
    /// often 128) or the process's descriptor limit is reached, ENOMEM.
    package init() throws(SystemError) {
        let descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else { throw SystemError.current("inotify_init1") }
        // A pipe, not an eventfd: Swift's Glibc module leaves out <sys/eventfd.h> (the TCP
        // layer binds eventfd at run time for that reason), and `pipe2` needs _GNU_SOURCE.
        // `pipe` then `fcntl` leaves a window in which a concurrent fork+exec elsewhere in the
        // process could inherit the two ends; harmless here, since nothing waits for their EOF.
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            let error = SystemError.current("pipe")
            close(descriptor)
            throw error
        }
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        self.descriptor = descriptor
        wakeReadEnd = ends[0]
        wakeWriteEnd = ends[1]
    }

    deinit {
        close(descriptor)
        close(wakeReadEnd)
        close(wakeWriteEnd)
    }

    /// Watches `path` for the events in `mask` (see `InotifyMask`); returns the watch
    /// descriptor the kernel will name in its events.
    ///
    /// Watching an inode that is already watched returns its existing descriptor (with the
    /// mask replaced), which callers use to recognise a directory reached twice.
    ///
    /// Errors: ENOSPC when `fs.inotify.max_user_watches` is reached (`isWatchLimit`), ENOENT,
    /// EACCES (no read permission), ENOTDIR (with `IN_ONLYDIR`), ENOMEM.
    package func addWatch(path: String, mask: UInt32) throws(SystemError) -> Int32 {
        let watch = path.withCString { inotify_add_watch(descriptor, $0, mask) }
        guard watch >= 0 else { throw SystemError.current("inotify_add_watch", path: path) }
        return watch
    }

    /// Stops a watch; the kernel then queues an `IN_IGNORED` event for it.
    ///
    /// EINVAL means the watch is already gone (its directory was deleted and the kernel
    /// dropped it): callers that remove watches for directories that moved away may ignore it.
    package func removeWatch(_ watch: Int32) throws(SystemError) {
        guard inotify_rm_watch(descriptor, watch) == 0 else { throw SystemError.current("inotify_rm_watch") }
    }

    /// Makes a `readEvents` blocked on another thread return (with whatever is queued, or
    /// nothing). Safe from any thread; a wake-up that finds nobody waiting makes the next
    /// `readEvents` return at once.
    package func wake() {
        var byte: UInt8 = 1
        // A full pipe already holds a wake-up, so a failed write loses nothing.
        _ = write(wakeWriteEnd, &byte, 1)
    }

    /// The events queued now, or, if none, the first ones to arrive within `timeout`
    /// (nil: wait as long as it takes, `.zero`: do not wait). Returns an empty array when
    /// the timeout passes or `wake()` was called.
    ///
    /// One `read` of up to `readBufferSize` bytes per call: callers drain a burst by
    /// calling again with `.zero` until it returns nothing.
    package func readEvents(timeout: Duration?) throws(SystemError) -> [InotifyEvent] {
        var descriptors = [
            pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wakeReadEnd, events: Int16(POLLIN), revents: 0),
        ]
        let milliseconds = Self.pollMilliseconds(timeout)
        while true {
            let ready = poll(&descriptors, nfds_t(descriptors.count), milliseconds)
            if ready >= 0 { break }
            // A signal handler ran; waiting again for the whole timeout is fine for a watcher
            // (the timeouts it uses are zero or infinite).
            guard errno == EINTR else { throw SystemError.current("poll") }
        }
        if descriptors[1].revents != 0 { drainWakeUps() }
        guard descriptors[0].revents != 0 else { return [] }
        let result: Result<[InotifyEvent], SystemError> = withUnsafeTemporaryAllocation(
            byteCount: Self.readBufferSize, alignment: MemoryLayout<Int32>.alignment
        ) { buffer in
            guard let base = buffer.baseAddress else { return .success([]) }
            while true {
                let count = read(descriptor, base, buffer.count)
                if count > 0 {
                    return .success(Self.parseEvents(UnsafeRawBufferPointer(start: base, count: min(count, buffer.count))))
                }
                if count == 0 { return .success([]) }
                if errno == EINTR { continue }
                // Another reader took the events between poll and read.
                if errno == EAGAIN || errno == EWOULDBLOCK { return .success([]) }
                return .failure(SystemError.current("read", path: "inotify"))
            }
        }
        return try result.get()
    }

    /// Parses what one `read` returned: `struct inotify_event` records (wd Int32, mask,
    /// cookie and len UInt32, then `len` bytes of NUL-padded name), back to back.
    ///
    /// Every field is read with `loadUnaligned` from within `bytes`, and a record whose
    /// header or name would run past the end is dropped with everything after it: the
    /// kernel never returns a partial record, but `len` is not trusted beyond the bytes
    /// actually read.
    package static func parseEvents(_ bytes: UnsafeRawBufferPointer) -> [InotifyEvent] {
        var events: [InotifyEvent] = []
        var offset = 0
        while bytes.count - offset >= headerSize {
            let watch = bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self)
            let mask = bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
            let cookie = bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self)
            let length = bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self)
            let nameStart = offset + headerSize
            // Compared before any addition with `length`, so a huge value cannot overflow.
            guard UInt(length) <= UInt(bytes.count - nameStart) else { break }
            let nameEnd = nameStart + Int(length)
            var name: [UInt8] = []
            if nameEnd > nameStart {
                let field = UnsafeRawBufferPointer(rebasing: bytes[nameStart..<nameEnd])
                let used = field.firstIndex(of: 0) ?? field.count
                name = Array(field.prefix(used))
            }
            events.append(InotifyEvent(watch: watch, mask: mask, cookie: cookie, name: name))
            offset = nameEnd
        }
        return events
    }

    private func drainWakeUps() {
        var bytes = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        while withUnsafeMutableBytes(of: &bytes, { read(wakeReadEnd, $0.baseAddress, $0.count) }) > 0 {}
    }

    /// `poll`'s timeout: -1 for none, otherwise milliseconds rounded up (so a short timeout
    /// does not become a busy zero) and capped at Int32.max.
    private static func pollMilliseconds(_ timeout: Duration?) -> Int32 {
        guard let timeout else { return -1 }
        let (seconds, attoseconds) = timeout.components
        if seconds < 0 || (seconds == 0 && attoseconds <= 0) { return 0 }
        let millisecondsFromFraction = (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        let (fromSeconds, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        guard !overflow else { return Int32.max }
        let total = fromSeconds.addingReportingOverflow(millisecondsFromFraction)
        guard !total.overflow, total.partialValue <= Int64(Int32.max) else { return Int32.max }
        return Int32(total.partialValue)
    }
}

/// One record from the kernel. `watch` is -1 for `IN_Q_OVERFLOW`; `name` is empty for an
/// event on the watched directory itself, otherwise the entry's name without its NUL padding
/// (raw bytes: Linux names need not be UTF-8).
package struct InotifyEvent: Sendable, Equatable {
    package var watch: Int32
    package var mask: UInt32
    package var cookie: UInt32
    package var name: [UInt8]

    package init(watch: Int32, mask: UInt32, cookie: UInt32, name: [UInt8]) {
        self.watch = watch
        self.mask = mask
        self.cookie = cookie
        self.name = name
    }

    package func has(_ bits: UInt32) -> Bool { mask & bits != 0 }
}

/// The `IN_*` bits as `UInt32`, the type `inotify_add_watch` takes and events carry.
/// Glibc imports them as `Int32`; converting here keeps the casts out of callers.
package enum InotifyMask {
    package static let modify = UInt32(truncatingIfNeeded: IN_MODIFY)
    package static let attrib = UInt32(truncatingIfNeeded: IN_ATTRIB)
    package static let closeWrite = UInt32(truncatingIfNeeded: IN_CLOSE_WRITE)
    package static let movedFrom = UInt32(truncatingIfNeeded: IN_MOVED_FROM)
    package static let movedTo = UInt32(truncatingIfNeeded: IN_MOVED_TO)
    package static let create = UInt32(truncatingIfNeeded: IN_CREATE)
    package static let delete = UInt32(truncatingIfNeeded: IN_DELETE)
    package static let deleteSelf = UInt32(truncatingIfNeeded: IN_DELETE_SELF)
    package static let moveSelf = UInt32(truncatingIfNeeded: IN_MOVE_SELF)
    /// Sent without being asked for: the file system holding the watch was unmounted.
    package static let unmount = UInt32(truncatingIfNeeded: IN_UNMOUNT)
    /// Sent without being asked for, with watch -1: the queue overflowed and events were lost.
    package static let queueOverflow = UInt32(truncatingIfNeeded: IN_Q_OVERFLOW)
    /// Sent without being asked for: the watch is gone (removed, or its inode deleted).
    package static let ignored = UInt32(truncatingIfNeeded: IN_IGNORED)
    package static let onlyDirectory = UInt32(truncatingIfNeeded: IN_ONLYDIR)
    package static let dontFollow = UInt32(truncatingIfNeeded: IN_DONT_FOLLOW)
    /// No events for children after they are unlinked (a deleted file still open elsewhere).
    package static let excludeUnlinked = UInt32(truncatingIfNeeded: IN_EXCL_UNLINK)
    /// Set in an event's mask when its subject is a directory.
    package static let isDirectory = UInt32(truncatingIfNeeded: IN_ISDIR)
}

extension SystemError {
    /// The kernel refused an inotify watch or instance for lack of room
    /// (`max_user_watches`: ENOSPC; `max_user_instances` or descriptors: EMFILE; memory:
    /// ENOMEM), as opposed to a problem with one directory: a watcher stops adding watches
    /// and falls back to rescanning.
    package var isWatchLimit: Bool {
        errno == ENOSPC || errno == ENOMEM || errno == EMFILE || errno == ENFILE
    }
}
