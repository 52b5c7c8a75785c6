import Foundation
import Testing
@testable import LocalFirstSync
@testable import LFSyncTCP
@testable import LFSyncTransport

/// What only real sockets have: timeouts against a kernel, dual stack, names, descriptors.
/// All traffic stays on loopback.
@Suite struct TCPTransportTests {
    typealias Support = TransportTestSupport

    @Test func connectTimesOutAgainstAListenerWithAFullBacklog() async throws {
        // A listener that never accepts, with the smallest backlog: once its accept queue is
        // full the kernel drops further SYNs, so a connect can only time out. (No
        // non-routable addresses: the test must not touch any network but loopback.)
        let transport = TCPTransport(configuration: .init(listenBacklog: 0))
        let listener = try await transport.listen(on: PeerAddress(host: "127.0.0.1", port: 0))
        var established: [any Connection] = []
        var timedOut = false
        for _ in 0..<16 {
            let start = ContinuousClock.now
            do {
                established.append(try await transport.connect(to: listener.localAddress, timeout: .milliseconds(300)))
            } catch {
                #expect(error == .timedOut(.connect))
                #expect(ContinuousClock.now - start >= .milliseconds(250))
                timedOut = true
                break
            }
        }
        if !timedOut {
            print("note: the kernel accepted 16 connections into a backlog of 0; connect timeout not exercised")
        }
        for connection in established { await connection.close() }
        await listener.close()
    }

    @Test func ipv6LoopbackWorks() async throws {
        guard Support.hasIPv6Loopback else {
            print("note: this machine has no IPv6 loopback (::1); IPv6 not tested")
            return
        }
        let transport = TCPTransport()
        let listener = try await transport.listen(on: PeerAddress(parsing: "[::1]:0")!)
        #expect(listener.localAddress.host == "::1")
        async let accepted = listener.accept()
        let client = try await transport.connect(to: listener.localAddress, timeout: .seconds(5))
        let server = try await accepted
        #expect(server.remoteAddress?.host == "::1")
        try await client.send([1, 2, 3])
        #expect(try await server.receive() == [1, 2, 3])
        await client.close()
        await server.close()
        await listener.close()
    }

    @Test func wildcardIPv6ListenerIsDualStack() async throws {
        guard Support.hasIPv6Loopback else {
            print("note: no IPv6 loopback; dual-stack listener not tested")
            return
        }
        let transport = TCPTransport()
        let listener = try await transport.listen(on: PeerAddress(parsing: "[::]:0")!)
        let port = listener.localAddress.port
        for host in ["127.0.0.1", "::1"] {
            async let accepted = listener.accept()
            let client = try await transport.connect(to: PeerAddress(host: host, port: port), timeout: .seconds(5))
            let server = try await accepted
            // IPv4 peers of a dual-stack socket show as plain IPv4, not ::ffff:127.0.0.1.
            #expect(server.remoteAddress?.host == host)
            await client.close()
            await server.close()
        }
        await listener.close()
    }

    @Test func hostNamesAreResolved() async throws {
        let transport = TCPTransport()
        let listener = try await transport.listen(on: PeerAddress(host: "127.0.0.1", port: 0))
        async let accepted = listener.accept()
        // "localhost" may resolve to ::1 first; the connect falls back to 127.0.0.1.
        let client = try await transport.connect(to: PeerAddress(host: "localhost", port: listener.localAddress.port), timeout: .seconds(5))
        let server = try await accepted
        #expect(client.remoteAddress == listener.localAddress)
        await client.close()
        await server.close()
        await listener.close()
    }

    @Test func malformedAddressesAreRejected() async throws {
        let transport = TCPTransport()
        let bad = await Support.transportError { () async throws(TransportError) in
            try await transport.connect(to: PeerAddress(host: "999.1.1.1", port: 80), timeout: .seconds(1))
        }
        guard case .invalidAddress? = bad else {
            Issue.record("expected invalidAddress, got \(String(describing: bad))")
            return
        }
        let portZero = await Support.transportError { () async throws(TransportError) in
            try await transport.connect(to: PeerAddress(host: "127.0.0.1", port: 0), timeout: .seconds(1))
        }
        guard case .invalidAddress? = portZero else {
            Issue.record("expected invalidAddress, got \(String(describing: portZero))")
            return
        }
    }

    @Test func listeningTwiceOnOnePortIsAddressInUse() async throws {
        let transport = TCPTransport()
        let listener = try await transport.listen(on: PeerAddress(host: "127.0.0.1", port: 0))
        let error = await Support.transportError { () async throws(TransportError) in
            try await transport.listen(on: listener.localAddress)
        }
        #expect(error == .addressInUse)
        await listener.close()
    }

    @Test func aPeerResetIsReportedAsConnectionReset() async throws {
        let transport = TCPTransport()
        let listener = try await transport.listen(on: PeerAddress(host: "127.0.0.1", port: 0))
        async let accepted = listener.accept()
        let client = try await transport.connect(to: listener.localAddress, timeout: .seconds(5))
        let server = try #require(try await accepted as? TCPConnection)
        server.core.abort()  // close with RST, as a crashing peer's kernel would
        #expect(await Support.transportError { () async throws(TransportError) in try await client.receive() } == .connectionReset)
        await client.close()
        await listener.close()
    }

    /// A connection refused over a cap (or silent past its set-up deadline) is aborted: its
    /// descriptor goes at once, with a reset, instead of lingering up to the close timeout
    /// while the peer holds it open. A flood of them used to exhaust `serve`'s descriptors.
    /// The device and inode behind an open descriptor (a socket's are unique while it is
    /// open), or nil when the descriptor is closed.
    static func inode(of descriptor: Int32) -> String? {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return nil }
        return "\(status.st_dev):\(status.st_ino)"
    }

    @Test func abortReleasesTheDescriptorAtOnceWithAReset() async throws {
        let transport = TCPTransport(configuration: .init(closeTimeout: .seconds(30)))
        let listener = try await transport.listen(on: PeerAddress(host: "127.0.0.1", port: 0))
        async let accepted = listener.accept()
        let client = try await transport.connect(to: listener.localAddress, timeout: .seconds(5))
        let server = try #require(try await accepted as? TCPConnection)
        let descriptor = server.core.fd
        let socket = try #require(Self.inode(of: descriptor))
        // The client never closes: a graceful close would linger for the whole 30 s.
        await server.abort()
        // Other tests run in parallel and may already have reused the number: what must be
        // gone is this socket, whatever the number now holds.
        #expect(Self.inode(of: descriptor) != socket, "the socket is closed as abort returns")
        #expect(await Support.transportError { () async throws(TransportError) in try await client.receive() } == .connectionReset)
        // Closing afterwards is harmless (idempotent).
        await server.close()
        await client.close()
        await listener.close()
    }

    @Test func sendsToAClosedPeerFailOnceItStopsLingering() async throws {
        // A closed peer first reads and discards (so our data in flight survives), then
        // releases its socket at its close timeout; from then on our sends are reset.
        let transport = TCPTransport(configuration: .init(closeTimeout: .milliseconds(200)))
        let listener = try await transport.listen(on: PeerAddress(host: "127.0.0.1", port: 0))
        async let accepted = listener.accept()
        let client = try await transport.connect(to: listener.localAddress, timeout: .seconds(5))
        let server = try await accepted
        await server.close()
        #expect(try await client.receive() == nil)
        var failure: TransportError?
        let deadline = ContinuousClock.now + .seconds(10)
        while failure == nil, ContinuousClock.now < deadline {
            failure = await Support.transportError { () async throws(TransportError) in try await client.send([0]) }
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(failure == .connectionReset)
        await client.close()
        await listener.close()
    }

    @Test func noDescriptorLeaks() async throws {
        // Other suites run in parallel in this process, so counting all descriptors would be
        // flaky; instead every socket this test creates is identified by its inode, and none
        // may remain open afterwards — whether closed, dropped without close, or refused.
        var inodes: Set<String> = []
        do {
            let transport = TCPTransport()
            let listener = try await transport.listen(on: PeerAddress(host: "127.0.0.1", port: 0))
            if let tcp = listener as? TCPListener { inodes.insert(Self.socketInode(tcp.descriptor)) }
            for index in 0..<8 {
                async let accepted = listener.accept()
                let client = try await transport.connect(to: listener.localAddress, timeout: .seconds(5))
                let server = try await accepted
                for connection in [client, server] {
                    if let tcp = connection as? TCPConnection { inodes.insert(Self.socketInode(tcp.core.fd)) }
                }
                try await client.send(Support.pattern(100_000, seed: UInt64(index)))
                _ = try await Support.receive(100_000, from: server)
                if index.isMultiple(of: 2) {
                    await client.close()
                    await server.close()
                }
                // Odd rounds: the handles are simply dropped.
            }
            await listener.close()
        }
        #expect(inodes.count == 17)
        let leaked = await Support.eventually(within: .seconds(5)) { Self.openSocketInodes().isDisjoint(with: inodes) }
        #expect(leaked, "sockets still open: \(Self.openSocketInodes().intersection(inodes))")
    }

    private static func socketInode(_ fd: Int32) -> String {
        var status = stat()
        fstat(fd, &status)
        return "socket:[\(status.st_ino)]"
    }

    private static func openSocketInodes() -> Set<String> {
        let directory = "/proc/self/fd"
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return Set(entries.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "\(directory)/\($0)") })
    }

    @Test func reactorThreadStopsWithItsLastOwner() async throws {
        weak var weakReactor: EpollReactor?
        do {
            let transport = TCPTransport()
            let listener = try await transport.listen(on: PeerAddress(host: "127.0.0.1", port: 0))
            weakReactor = try transport.reactor()
            await listener.close()
        }
        #expect(weakReactor == nil)
    }
}
