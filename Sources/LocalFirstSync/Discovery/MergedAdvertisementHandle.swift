/// Cancels every member's advertisement together.
struct MergedAdvertisementHandle: AdvertisementHandle {
    let advertisement: ServiceAdvertisement
    let registeredName: String
    let handles: [any AdvertisementHandle]

    func cancel() async {
        for handle in handles { await handle.cancel() }
    }
}
