internal import CDNSSD

/// Whoever created a `DNSSDServiceRef` and receives its callbacks.
protocol DNSSDRefOwner: AnyObject {
    /// `DNSServiceProcessResult` failed for `ref` (the daemon connection broke).
    func serviceRef(_ ref: DNSSDServiceRef, failedWith status: DNSServiceErrorType)
}
