import Testing
@testable import LocalFirstSync
@testable import LFSyncTransport

@Suite struct PeerAddressTests {
    @Test(arguments: [
        ("nas.local:7000", "nas.local", UInt16(7000)),
        ("127.0.0.1:0", "127.0.0.1", 0),
        ("[::1]:65535", "::1", 65535),
        ("[fe80::1%eth0]:22000", "fe80::1%eth0", 22000),
        ("laptop:1", "laptop", 1),
    ])
    func parses(text: String, host: String, port: UInt16) throws {
        let address = try #require(PeerAddress(parsing: text))
        #expect(address.host == host)
        #expect(address.port == port)
        #expect(address.description == text)
        #expect(PeerAddress(parsing: address.description) == address)
    }

    @Test(arguments: [
        "", "nas", "nas:", ":7000", "nas:70000", "nas:-1", "nas:+80", "nas:0x50", "::1:80", "[::1]", "[::1]80",
        "[::1:80", "[nas]:80", "n as:80", "nas:80 ", "nas\n:80", "[]:80", "nas:123456",
    ])
    func rejects(text: String) {
        #expect(PeerAddress(parsing: text) == nil)
    }
}
