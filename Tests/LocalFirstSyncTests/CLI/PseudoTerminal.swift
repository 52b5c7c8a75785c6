import CLinux
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A pseudo-terminal for a child's stdin and stderr, so that `lfsync serve`
/// finds a person at a terminal and asks its questions there: the test reads
/// what was asked and types the answer.
final class PseudoTerminal: @unchecked Sendable {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The side the test reads and writes.
    private let primary: Int32
    /// The side the child gets; the test's copy is closed once the child has it.
    private(set) var secondary: FileHandle?
    private let lock = NSLock()
    private var received = Data()
    private let readerDone = DispatchSemaphore(value: 0)

    init() throws {
        primary = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard primary >= 0 else { throw Failure(description: "posix_openpt: \(String(cString: strerror(errno)))") }
        var name = [CChar](repeating: 0, count: 128)
        guard grantpt(primary) == 0, unlockpt(primary) == 0, ptsname_r(primary, &name, name.count) == 0 else {
            Glibc.close(primary)
            throw Failure(description: "cannot set up the pseudo-terminal: \(String(cString: strerror(errno)))")
        }
        let path = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let fd = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else {
            Glibc.close(primary)
            throw Failure(description: "open \(path): \(String(cString: strerror(errno)))")
        }
        secondary = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        // A blocking read on its own thread: it ends (EIO) when no process holds the other side any more.
        Thread.detachNewThread { [self] in
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(primary, &chunk, chunk.count)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                lock.withLock { received.append(contentsOf: chunk[0..<count]) }
            }
            readerDone.signal()
        }
    }

    /// Call once the child runs: from then on only the child holds the terminal's other side.
    func childStarted() {
        try? secondary?.close()
        secondary = nil
    }

    /// Everything written to the terminal so far (its line endings are "\r\n").
    var output: String { lock.withLock { String(decoding: received, as: UTF8.self) } }

    /// Types `text`, as a person at the terminal would.
    func type(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(primary, $0.baseAddress, $0.count) }
    }

    /// Waits until the output contains `text` after `offset` characters of it; false on timeout.
    func wait(for text: String, after offset: Int = 0, timeout: Duration = .seconds(60)) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if output.dropFirst(offset).contains(text) { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    /// After the child has exited: waits for the reader to see the end, then closes.
    func close() {
        childStarted()
        _ = readerDone.wait(timeout: .now() + 5)
        Glibc.close(primary)
    }
}
