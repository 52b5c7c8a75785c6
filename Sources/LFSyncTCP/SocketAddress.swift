#if canImport(Glibc)
import Glibc
#endif
import LFSyncTransport

/// A resolved IPv4 or IPv6 socket address (`sockaddr_storage` plus its length), kept inside
/// the TCP implementation so C types never reach the public API.
struct SocketAddress: Sendable {
    private var storage = sockaddr_storage()
    private(set) var length: socklen_t = 0

    package var family: Int32 { Int32(storage.ss_family) }

    package init?(_ pointer: UnsafePointer<sockaddr>, length: socklen_t) {
        guard length > 0, Int(length) <= MemoryLayout<sockaddr_storage>.size else { return nil }
        withUnsafeMutableBytes(of: &storage) { destination in
            destination.copyMemory(from: UnsafeRawBufferPointer(start: pointer, count: Int(length)))
        }
        self.length = length
    }

    package func withSockAddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        withUnsafeBytes(of: storage) { raw in
            body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), length)
        }
    }

    /// The numeric `PeerAddress` (an IPv4-mapped IPv6 address, as a dual-stack listener sees
    /// IPv4 peers, is shown as plain IPv4).
    package var peerAddress: PeerAddress? {
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        var service = [CChar](repeating: 0, count: Int(NI_MAXSERV))
        let status = withSockAddr { address, length in
            getnameinfo(address, length, &host, socklen_t(host.count), &service, socklen_t(service.count),
                        NI_NUMERICHOST | NI_NUMERICSERV)
        }
        guard status == 0, let port = UInt16(Self.string(service)) else { return nil }
        var text = Self.string(host)
        if text.lowercased().hasPrefix("::ffff:"), text.contains(".") { text.removeFirst(7) }
        return PeerAddress(host: text, port: port)
    }

    private static func string(_ characters: [CChar]) -> String {
        String(decoding: characters.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The address of the local (`getsockname`) or remote (`getpeername`) end of `fd`.
    package static func of(_ fd: Int32, remote: Bool) -> SocketAddress? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let status = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                remote ? getpeername(fd, address, &length) : getsockname(fd, address, &length)
            }
        }
        guard status == 0 else { return nil }
        return withUnsafePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { SocketAddress($0, length: length) }
        }
    }
}
