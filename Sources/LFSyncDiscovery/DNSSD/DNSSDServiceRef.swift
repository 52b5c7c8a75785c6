internal import CDNSSD

/// One `DNSServiceRef`, owned by the loop thread.
///
/// Every ref is deallocated exactly once: `deallocate()` clears the pointer
/// before calling `DNSServiceRefDeallocate`, and `deinit` covers a ref that
/// was never retired. The ref keeps its owner alive until then, because the
/// owner is the (unretained) context pointer the C callbacks receive.
final class DNSSDServiceRef {
    private var pointer: DNSServiceRef?
    private(set) var owner: (any DNSSDRefOwner)?
    /// The descriptor to poll; avahi's compat layer signals results on it.
    package let socket: Int32
    /// Retired refs get no more callbacks delivered to their owner.
    private(set) var isRetired = false

    package init(pointer: DNSServiceRef, owner: any DNSSDRefOwner) {
        self.pointer = pointer
        self.owner = owner
        socket = DNSServiceRefSockFD(pointer)
    }

    deinit {
        deallocate()
    }

    package var isActive: Bool { pointer != nil && !isRetired }

    package func matches(_ other: DNSServiceRef?) -> Bool {
        other != nil && other == pointer
    }

    package func retire() {
        isRetired = true
    }

    /// Delivers pending results to the callbacks; call only when `socket` is readable.
    package func processResult() -> DNSServiceErrorType {
        guard let pointer, !isRetired else { return DNSSDErrorCode.noError }
        return DNSServiceProcessResult(pointer)
    }

    package func deallocate() {
        guard let pointer else { return }
        self.pointer = nil
        isRetired = true
        DNSServiceRefDeallocate(pointer)
        owner = nil
    }
}
