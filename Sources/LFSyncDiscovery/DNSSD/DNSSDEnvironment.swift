#if canImport(Glibc)
import Glibc
#endif

/// Process-wide preparation for avahi's libdns_sd.
enum DNSSDEnvironment {
    /// Avahi's compatibility layer prints a multi-line "*** WARNING *** The
    /// program uses the Apple Bonjour compatibility layer" banner to stderr on
    /// first use unless this variable is set. It only checks for presence, so an
    /// existing value is left alone. Done once (a `static let` initialiser runs
    /// exactly once, thread-safely) before any libdns_sd call.
    private static let silenced: Void = {
        setenv("AVAHI_COMPAT_NOWARN", "1", 0)
    }()

    package static func prepare() {
        silenced
    }
}
