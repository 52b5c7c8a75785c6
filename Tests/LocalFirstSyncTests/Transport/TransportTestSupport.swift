import Foundation
import Synchronization
import Testing
@testable import LocalFirstSync
@testable import LFSyncTCP
@testable import LFSyncTransport
@testable import LocalFirstSyncTesting

/// The transports the shared conformance suite runs against.
enum TransportKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case tcpIPv4
    case tcpIPv6
    case inMemory

    var testDescription: String { rawValue }
}

/// A transport pair (client and server side) plus where to listen, with per-test settings.
struct TransportFixture: Sendable {
    let kind: TransportKind
    let client: any Transport
    let server: any Transport
    let listenAddress: PeerAddress

    struct Settings: Sendable {
        var idleTimeout: Duration? = .seconds(30)
        var sendQueueLimitBytes = 1 << 20
        var receiveChunkSize = 256 << 10
        var closeTimeout: Duration = .seconds(5)
    }

    /// Nil (with a printed reason) when the machine cannot run `kind`, e.g. no IPv6 loopback.
    /// Cancels the test (reported as skipped, with the reason) where `kind` cannot run here.
    static func make(_ kind: TransportKind, _ settings: Settings = Settings()) throws -> TransportFixture? {
        switch kind {
        case .tcpIPv4, .tcpIPv6:
            if kind == .tcpIPv6, !TransportTestSupport.hasIPv6Loopback {
                try Test.cancel("this machine has no IPv6 loopback (::1)")
            }
            let transport = TCPTransport(configuration: .init(
                idleTimeout: settings.idleTimeout, sendQueueLimitBytes: settings.sendQueueLimitBytes,
                receiveChunkSize: settings.receiveChunkSize, closeTimeout: settings.closeTimeout))
            let host = kind == .tcpIPv4 ? "127.0.0.1" : "::1"
            return TransportFixture(kind: kind, client: transport, server: transport, listenAddress: PeerAddress(host: host, port: 0))
        case .inMemory:
            let network = InMemoryNetwork()
            let configuration = InMemoryTransport.Configuration(
                idleTimeout: settings.idleTimeout, sendQueueLimitBytes: settings.sendQueueLimitBytes,
                receiveChunkSize: settings.receiveChunkSize)
            return TransportFixture(
                kind: kind, client: network.transport(host: "laptop", configuration: configuration),
                server: network.transport(host: "nas", configuration: configuration),
                listenAddress: PeerAddress(host: "::", port: 7000))
        }
    }

    /// A connected pair and its listener; the listener is closed by `finish`.
    func connectedPair() async throws -> (client: any Connection, server: any Connection, listener: any Listener) {
        let listener = try await server.listen(on: listenAddress)
        async let accepted = listener.accept()
        let client = try await self.client.connect(to: listener.localAddress, timeout: .seconds(10))
        return (client, try await accepted, listener)
    }

    /// An address where nothing listens.
    func refusingAddress() async throws -> PeerAddress {
        switch kind {
        case .inMemory:
            return PeerAddress(host: "nas", port: 7999)
        case .tcpIPv4, .tcpIPv6:
            // Bind an ephemeral port, then free it: nothing listens there any more.
            let listener = try await server.listen(on: listenAddress)
            let address = listener.localAddress
            await listener.close()
            return address
        }
    }
}

enum TransportTestSupport {
    static let hasIPv6Loopback: Bool = {
        let fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_addr = in6addr_loopback
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) == 0
            }
        }
    }()

    /// Reproducible pseudo-random bytes (SplitMix64 words, little-endian), generated a word
    /// at a time: the tests run in debug builds, where a per-byte loop over tens of MiB would
    /// keep the two cooperative threads busy for seconds.
    static func pattern(_ count: Int, seed: UInt64) -> [UInt8] {
        var state = seed
        let words = (count + 7) / 8
        var bytes = [UInt8](repeating: 0, count: words * 8)
        bytes.withUnsafeMutableBytes { raw in
            let output = raw.bindMemory(to: UInt64.self)
            for index in 0..<words {
                state &+= 0x9E37_79B9_7F4A_7C15
                var z = state
                z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
                z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
                output[index] = (z ^ (z >> 31)).littleEndian
            }
        }
        bytes.removeLast(words * 8 - count)
        return bytes
    }

    /// Byte equality via `memcmp` (Array's `==` is element by element in debug builds).
    static func same(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        lhs.count == rhs.count && lhs.withUnsafeBytes { left in
            rhs.withUnsafeBytes { right in left.count == 0 || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0 }
        }
    }

    /// Sends `bytes` in pieces of `chunk` bytes.
    static func send(_ bytes: [UInt8], over connection: any Connection, chunk: Int = 64 << 10) async throws {
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + chunk)
            try await connection.send(Array(bytes[offset..<end]))
            offset = end
        }
    }

    /// Receives until `count` bytes arrived or the stream ended.
    static func receive(_ count: Int, from connection: any Connection) async throws -> [UInt8] {
        var received: [UInt8] = []
        received.reserveCapacity(count)
        while received.count < count, let bytes = try await connection.receive() {
            received += bytes
        }
        return received
    }

    /// Receives until end of stream.
    static func receiveAll(from connection: any Connection) async throws -> [UInt8] {
        var received: [UInt8] = []
        while let bytes = try await connection.receive() { received += bytes }
        return received
    }

    /// Echoes everything back until end of stream, then closes.
    static func echo(_ connection: any Connection) async throws {
        while let bytes = try await connection.receive() {
            try await connection.send(bytes)
        }
        await connection.close()
    }

    /// A stream digest for comparing what was sent with what arrived (per-process seeded,
    /// boundary independent: pieces hash like the whole).
    static func digest(_ pieces: [[UInt8]]) -> Int {
        var hasher = Hasher()
        for piece in pieces { piece.withUnsafeBytes { hasher.combine(bytes: $0) } }
        return hasher.finalize()
    }

    /// Runs `operation` and returns the typed transport error it threw (nil if it succeeded).
    static func transportError<T>(_ operation: () async throws(TransportError) -> T) async -> TransportError? {
        do {
            _ = try await operation()
            return nil
        } catch {
            return error
        }
    }

    /// Polls `condition` every 10 ms until it holds or `timeout` passes; returns whether it held.
    static func eventually(within timeout: Duration = .seconds(10), _ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition()
    }
}

/// A counter shared between a producing task and the test.
final class ByteCounter: Sendable {
    private let value = Atomic<Int>(0)
    var current: Int { value.load(ordering: .relaxed) }
    func add(_ count: Int) { value.add(count, ordering: .relaxed) }
}
