/// A mistake on the command line. Every one unwinds to a single printer that
/// shows the reason and a hint, and exits 64 (EX_USAGE).
struct UsageError: Error, Sendable {
    var message: String
    var hint: String?
}
