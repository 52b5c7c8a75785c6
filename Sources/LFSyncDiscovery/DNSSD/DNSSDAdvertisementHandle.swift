import Synchronization

/// A confirmed DNS-SD registration; withdrawing it deallocates the ref on the loop thread.
final class DNSSDAdvertisementHandle: AdvertisementHandle {
    package let advertisement: ServiceAdvertisement
    package let registeredName: String
    private let loop: DNSSDEventLoop
    private let sessionID: DNSSDLoopState.SessionID
    private let release: @Sendable () -> Void
    private let withdrawn = Atomic<Bool>(false)

    package init(
        advertisement: ServiceAdvertisement, registeredName: String, loop: DNSSDEventLoop,
        sessionID: DNSSDLoopState.SessionID, release: @escaping @Sendable () -> Void
    ) {
        self.advertisement = advertisement
        self.registeredName = registeredName
        self.loop = loop
        self.sessionID = sessionID
        self.release = release
    }

    package func cancel() async {
        guard !withdrawn.exchange(true, ordering: .acquiringAndReleasing) else { return }
        release()
        let id = sessionID
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            loop.submit { state in
                state.stopSession(id)
                state.deallocateRetired()
                continuation.resume()
            }
        }
    }

    deinit {
        guard !withdrawn.exchange(true, ordering: .acquiringAndReleasing) else { return }
        release()
        let id = sessionID
        loop.submit { state in state.stopSession(id) }
    }
}
