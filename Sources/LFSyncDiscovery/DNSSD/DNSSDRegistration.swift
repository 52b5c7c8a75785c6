internal import CDNSSD

/// One advertisement: a `DNSServiceRegister` ref, alive until withdrawn.
///
/// `advertise` waits for the first register callback: avahi answers once the
/// records are established (after probing, and after renaming on a conflict),
/// and that callback carries the name actually in use.
final class DNSSDRegistration: DNSSDSession, DNSSDRefOwner {
    package typealias Completion = @Sendable (Result<String, DiscoveryError>) -> Void

    private let id: DNSSDLoopState.SessionID
    private let state: DNSSDLoopState
    private let requestedName: String
    private var ref: DNSSDServiceRef?
    private var completion: Completion?
    private var timeout: DNSSDLoopState.TimerID?

    package init(id: DNSSDLoopState.SessionID, state: DNSSDLoopState, requestedName: String, completion: @escaping Completion) {
        self.id = id
        self.state = state
        self.requestedName = requestedName
        self.completion = completion
    }

    package func start(serviceType: String, port: UInt16, txt: [UInt8], timeout limit: Duration) {
        var pointer: DNSServiceRef?
        let context = Unmanaged.passUnretained(self).toOpaque()
        // Avahi's compat layer rejects every flag (kDNSServiceFlagsNoAutoRename
        // included) and always renames on a conflict, hence flags 0.
        let status = txt.withUnsafeBytes { record in
            DNSServiceRegister(
                &pointer, 0, 0, requestedName, serviceType, nil, nil,
                port.bigEndian, UInt16(clamping: record.count), record.baseAddress,
                { sdRef, _, errorCode, name, _, _, context in
                    guard let context else { return }
                    let registration = Unmanaged<DNSSDRegistration>.fromOpaque(context).takeUnretainedValue()
                    registration.registerReply(sdRef, errorCode: errorCode, name: DNSSDText.string(name))
                },
                context)
        }
        guard status == DNSSDErrorCode.noError, let pointer else {
            finish(.failure(DNSSDErrorCode.registrationError(status, name: requestedName)))
            return
        }
        ref = state.watch(pointer, owner: self)
        state.add(self, id: id)
        timeout = state.schedule(after: limit) { [weak self] in
            guard let self else { return }
            finish(.failure(.timedOut(
                "avahi-daemon did not confirm the registration within \(limit) "
                    + "(a host-name conflict on the network stalls every registration)")))
            stop()
        }
    }

    private func registerReply(_ sdRef: DNSServiceRef?, errorCode: DNSServiceErrorType, name: String?) {
        guard let ref, ref.isActive, ref.matches(sdRef) else { return }
        if completion != nil {
            if errorCode == DNSSDErrorCode.noError {
                finish(.success(name ?? requestedName))
            } else {
                finish(.failure(DNSSDErrorCode.registrationError(errorCode, name: name ?? requestedName)))
                stop()
            }
        } else if errorCode != DNSSDErrorCode.noError {
            // Confirmed earlier and now lost (the daemon went away): nothing
            // left to withdraw, and the stream side reports the outage.
            stop()
        }
    }

    package func serviceRef(_ ref: DNSSDServiceRef, failedWith status: DNSServiceErrorType) {
        finish(.failure(DNSSDErrorCode.registrationError(status, name: requestedName)))
        stop()
    }

    /// Withdraws: deallocating the ref frees avahi's entry group, which sends the goodbye packets.
    package func stop() {
        state.retire(ref)
        state.cancel(timeout)
        timeout = nil
        state.remove(sessionID: id)
        finish(.failure(.cancelled))
    }

    /// Answers the waiting `advertise` call, exactly once.
    private func finish(_ result: Result<String, DiscoveryError>) {
        guard let completion else { return }
        self.completion = nil
        state.cancel(timeout)
        timeout = nil
        completion(result)
    }
}
