/// Which way bytes flow on an in-memory connection, relative to who connected.
public enum InMemoryDirection: Sendable, Hashable {
    /// From the side that called `connect` to the side that accepted.
    case fromConnector
    /// From the accepting side to the connecting side.
    case fromListener
    case both

    func includes(_ direction: InMemoryDirection) -> Bool {
        self == .both || self == direction
    }
}
