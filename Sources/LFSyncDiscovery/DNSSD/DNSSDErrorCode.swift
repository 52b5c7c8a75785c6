internal import CDNSSD

/// Names and human explanations for DNS-SD error codes.
enum DNSSDErrorCode {
    package static let noError = DNSServiceErrorType(kDNSServiceErr_NoError)
    package static let unknown = DNSServiceErrorType(kDNSServiceErr_Unknown)
    package static let nameConflict = DNSServiceErrorType(kDNSServiceErr_NameConflict)

    package static func name(of code: DNSServiceErrorType) -> String {
        switch Int(code) {
        case kDNSServiceErr_NoError: "kDNSServiceErr_NoError"
        case kDNSServiceErr_Unknown: "kDNSServiceErr_Unknown"
        case kDNSServiceErr_NoSuchName: "kDNSServiceErr_NoSuchName"
        case kDNSServiceErr_NoMemory: "kDNSServiceErr_NoMemory"
        case kDNSServiceErr_BadParam: "kDNSServiceErr_BadParam"
        case kDNSServiceErr_BadReference: "kDNSServiceErr_BadReference"
        case kDNSServiceErr_BadState: "kDNSServiceErr_BadState"
        case kDNSServiceErr_BadFlags: "kDNSServiceErr_BadFlags"
        case kDNSServiceErr_Unsupported: "kDNSServiceErr_Unsupported"
        case kDNSServiceErr_NameConflict: "kDNSServiceErr_NameConflict"
        case kDNSServiceErr_Invalid: "kDNSServiceErr_Invalid"
        case kDNSServiceErr_Incompatible: "kDNSServiceErr_Incompatible"
        case kDNSServiceErr_BadInterfaceIndex: "kDNSServiceErr_BadInterfaceIndex"
        case kDNSServiceErr_Refused: "kDNSServiceErr_Refused"
        default: "DNS-SD error"
        }
    }

    /// Avahi's compatibility layer maps "no daemon", "no D-Bus" and "daemon
    /// went away" all to kDNSServiceErr_Unknown (-65537), so that code gets the
    /// explanation a user can act on.
    package static func unavailableReason(_ code: DNSServiceErrorType) -> String {
        if code == unknown {
            return "avahi-daemon is not running or not reachable over the system D-Bus "
                + "(DNS-SD error \(code) \(name(of: code))); static host:port peers still work"
        }
        return "DNS-SD failed with error \(code) (\(name(of: code))); static host:port peers still work"
    }

    /// The error `advertise` throws for a failed registration.
    package static func registrationError(_ code: DNSServiceErrorType, name: String) -> DiscoveryError {
        switch code {
        case unknown: .unavailable(reason: unavailableReason(code))
        case nameConflict: .nameConflict(name)
        default: .registrationFailed(code: code, message: self.name(of: code))
        }
    }
}
