#if canImport(Glibc)
import Glibc
#endif

/// Copies C strings handed to us by libdns_sd without trusting them to be short.
enum DNSSDText {
    /// The longest escaped domain name libdns_sd produces (kDNSServiceMaxDomainName).
    package static let maxNameBytes = 1005

    /// The string up to its NUL, or nil when there is none within `maxBytes`
    /// (a corrupt or hostile name) or the pointer is nil.
    package static func string(_ pointer: UnsafePointer<CChar>?, maxBytes: Int = maxNameBytes) -> String? {
        guard let pointer else { return nil }
        let length = strnlen(pointer, maxBytes + 1)
        guard length <= maxBytes else { return nil }
        let bytes = UnsafeRawBufferPointer(start: pointer, count: length)
        return String(decoding: bytes, as: UTF8.self)
    }
}
