#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import LocalFirstSync
@testable import LFSyncTransport

@Suite struct TransportErrorTests {
    @Test func errnoMapping() {
        #expect(TransportError(errno: ECONNREFUSED, operation: "connect") == .connectionRefused)
        #expect(TransportError(errno: ECONNRESET, operation: "read") == .connectionReset)
        #expect(TransportError(errno: EPIPE, operation: "send") == .connectionReset)
        #expect(TransportError(errno: ETIMEDOUT, operation: "connect", connecting: true) == .timedOut(.connect))
        #expect(TransportError(errno: ETIMEDOUT, operation: "read") == .connectionReset)
        #expect(TransportError(errno: EHOSTUNREACH, operation: "connect") == .hostUnreachable)
        #expect(TransportError(errno: ENETUNREACH, operation: "connect") == .hostUnreachable)
        #expect(TransportError(errno: EADDRINUSE, operation: "bind") == .addressInUse)
        #expect(TransportError(errno: EADDRNOTAVAIL, operation: "bind") == .addressNotAvailable)
        #expect(TransportError(errno: EMFILE, operation: "socket") == .system(operation: "socket", errno: EMFILE))
    }

    @Test func descriptionsAreReadable() {
        #expect(TransportError.connectionRefused.description == "connection refused")
        #expect(TransportError.timedOut(.idle).description == "timed out waiting for data (idle)")
        #expect(TransportError.system(operation: "socket", errno: EMFILE).description == "socket: Too many open files")
    }
}
