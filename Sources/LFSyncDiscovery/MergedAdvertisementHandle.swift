/// Cancels every member's advertisement together.
struct MergedAdvertisementHandle: AdvertisementHandle {
    package let advertisement: ServiceAdvertisement
    package let registeredName: String
    package let handles: [any AdvertisementHandle]

    package func cancel() async {
        for handle in handles { await handle.cancel() }
    }
}
