internal import CSodium

/// libsodium must be initialised once before any primitive is used; every
/// wrapper touches `Sodium.ready` first. A failure here means the library
/// cannot find a random source, which nothing above can recover from.
enum Sodium {
    package static let ready: Void = {
        guard sodium_init() >= 0 else { fatalError("libsodium failed to initialise (no entropy source?)") }
    }()
}
