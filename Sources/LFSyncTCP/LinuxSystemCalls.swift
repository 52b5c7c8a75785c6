#if canImport(Glibc)
import Glibc

/// `epoll`, `eventfd` and `accept4`, bound at run time.
///
/// Why not `import Glibc`: Swift's Glibc module map leaves out `<sys/epoll.h>` and
/// `<sys/eventfd.h>`, and `accept4` needs `_GNU_SOURCE` (swift-nio ships a C shim target for
/// the same reason). A shim target would add a package-level C module for five functions;
/// instead they are looked up once
/// with `dlsym` in the already-loaded C library and called through typed C function
/// pointers. The constants are the kernel ABI and never change. If a `CLinuxShims` module is
/// added later, only this file changes.
enum LinuxSystemCalls {
    package static let controlAdd: Int32 = 1
    package static let controlDelete: Int32 = 2
    package static let controlModify: Int32 = 3

    package static let input: UInt32 = 0x001
    package static let output: UInt32 = 0x004
    package static let error: UInt32 = 0x008
    package static let hangUp: UInt32 = 0x010
    package static let readHangUp: UInt32 = 0x2000
    /// Disables the registration once it has reported, until re-armed with `controlModify`:
    /// each wait is armed exactly when someone waits, and never re-reports on its own.
    package static let oneShot: UInt32 = 1 << 30

    /// `struct epoll_event` is `__attribute__((packed))` on x86-64 only.
    #if arch(x86_64) || arch(i386)
    package static let eventStride = 12
    package static let dataOffset = 4
    #else
    package static let eventStride = 16
    package static let dataOffset = 8
    #endif

    private typealias CreateFunction = @convention(c) (Int32) -> Int32
    private typealias ControlFunction = @convention(c) (Int32, Int32, Int32, UnsafeMutableRawPointer?) -> Int32
    private typealias WaitFunction = @convention(c) (Int32, UnsafeMutableRawPointer?, Int32, Int32) -> Int32
    private typealias EventFDFunction = @convention(c) (UInt32, Int32) -> Int32
    private typealias AcceptFunction = @convention(c) (Int32, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, Int32) -> Int32

    /// The resolved entry points, as addresses (plain integers are trivially `Sendable`).
    private struct Symbols: Sendable {
        let create: UInt
        let control: UInt
        let wait: UInt
        let eventfd: UInt
        let accept4: UInt
    }

    private static let symbols: Symbols? = {
        guard let handle = dlopen(nil, RTLD_NOW) else { return nil }
        func address(_ name: String) -> UInt? {
            guard let symbol = dlsym(handle, name) else { return nil }
            return UInt(bitPattern: symbol)
        }
        guard let create = address("epoll_create1"), let control = address("epoll_ctl"),
              let wait = address("epoll_wait"), let eventfd = address("eventfd"),
              let accept4 = address("accept4")
        else { return nil }
        return Symbols(create: create, control: control, wait: wait, eventfd: eventfd, accept4: accept4)
    }()

    private static func function<F>(_ address: UInt, as type: F.Type) -> F {
        unsafeBitCast(UnsafeRawPointer(bitPattern: address), to: type)
    }

    /// A close-on-exec epoll instance, or -1 with errno set (ENOSYS when unavailable).
    package static func create() -> Int32 {
        guard let symbols else { errno = ENOSYS; return -1 }
        return function(symbols.create, as: CreateFunction.self)(O_CLOEXEC)
    }

    /// `epoll_ctl` with an `epoll_event` built from `events` and `data`.
    package static func control(_ epollFD: Int32, _ operation: Int32, _ fd: Int32, events: UInt32, data: UInt64) -> Int32 {
        guard let symbols else { errno = ENOSYS; return -1 }
        return withUnsafeTemporaryAllocation(byteCount: eventStride, alignment: 8) { buffer in
            buffer.initializeMemory(as: UInt8.self, repeating: 0)
            buffer.storeBytes(of: events, toByteOffset: 0, as: UInt32.self)
            buffer.storeBytes(of: data, toByteOffset: dataOffset, as: UInt64.self)
            return function(symbols.control, as: ControlFunction.self)(epollFD, operation, fd, buffer.baseAddress)
        }
    }

    /// `epoll_wait` into `buffer` (room for `buffer.count / eventStride` events).
    package static func wait(_ epollFD: Int32, into buffer: UnsafeMutableRawBufferPointer, timeoutMilliseconds: Int32) -> Int32 {
        guard let symbols else { errno = ENOSYS; return -1 }
        return function(symbols.wait, as: WaitFunction.self)(
            epollFD, buffer.baseAddress, Int32(buffer.count / eventStride), timeoutMilliseconds)
    }

    /// The `(events, data)` of the `index`th event `wait` filled in.
    package static func event(at index: Int, in buffer: UnsafeMutableRawBufferPointer) -> (events: UInt32, data: UInt64) {
        let offset = index * eventStride
        return (buffer.loadUnaligned(fromByteOffset: offset, as: UInt32.self),
                buffer.loadUnaligned(fromByteOffset: offset + dataOffset, as: UInt64.self))
    }

    /// A non-blocking, close-on-exec eventfd (the reactor's doorbell), or -1.
    package static func eventFD() -> Int32 {
        guard let symbols else { errno = ENOSYS; return -1 }
        return function(symbols.eventfd, as: EventFDFunction.self)(0, O_NONBLOCK | O_CLOEXEC)
    }

    /// `accept4` returning a non-blocking, close-on-exec descriptor atomically (no window in
    /// which a concurrent fork-and-exec could inherit it), or -1 with errno set.
    package static func acceptNonBlocking(_ fd: Int32) -> Int32 {
        guard let symbols else { errno = ENOSYS; return -1 }
        return function(symbols.accept4, as: AcceptFunction.self)(fd, nil, nil, O_NONBLOCK | O_CLOEXEC)
    }
}
#endif
