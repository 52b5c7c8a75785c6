/// A live advertisement. Cancelling withdraws it (peers see `.lost`).
///
/// Releasing the last reference withdraws it too, so an advertisement can never
/// outlive the code that owns it: keep the handle as long as you want to be found.
public protocol AdvertisementHandle: Sendable {
    /// What was asked for.
    var advertisement: ServiceAdvertisement { get }
    /// The instance name actually in use. DNS-SD renames on a conflict
    /// (`laptop` becomes `laptop #2`), so it may differ from `advertisement.instanceName`.
    var registeredName: String { get }
    /// Withdraws the advertisement; returns once the withdrawal was handed to
    /// the mechanism. Idempotent.
    func cancel() async
}
