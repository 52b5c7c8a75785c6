/// The bookkeeping behind `ConnectionLimits`: which connections are held, by
/// source address and phase. A value type with no clock and no I/O, so every
/// limit is tested without sockets; `LocalSync` owns one and asks it before
/// it spends anything on a new connection.
struct ConnectionAdmission: Sendable {
    /// A held slot; given back exactly once, with `release(_:)`.
    struct Ticket: Hashable, Sendable {
        let id: UInt64
        let address: String
    }

    enum Verdict: Equatable, Sendable {
        case admitted(Ticket)
        /// Over a cap: the connection is closed at once, and the reason logged.
        case refused(reason: String)
    }

    private struct Counts {
        var all = 0
        var unauthenticated = 0
    }

    let limits: ConnectionLimits
    private var byAddress: [String: Counts] = [:]
    private var total = Counts()
    private var authenticated = Set<UInt64>()
    private var held = Set<UInt64>()
    private var nextID: UInt64 = 0

    init(limits: ConnectionLimits) {
        self.limits = limits
    }

    var heldCount: Int { total.all }
    var unauthenticatedCount: Int { total.unauthenticated }

    /// A new connection from `address`, unauthenticated until `authenticated(_:)`.
    mutating func admit(from address: String) -> Verdict {
        let here = byAddress[address, default: Counts()]
        if total.all >= limits.total { return .refused(reason: "\(limits.total) connections already open") }
        if here.all >= limits.perAddress { return .refused(reason: "\(limits.perAddress) connections already open from \(address)") }
        if total.unauthenticated >= limits.unauthenticated {
            return .refused(reason: "\(limits.unauthenticated) connections already waiting to be accepted")
        }
        if here.unauthenticated >= limits.unauthenticatedPerAddress {
            return .refused(reason: "\(limits.unauthenticatedPerAddress) connections from \(address) already waiting to be accepted")
        }
        nextID += 1
        let ticket = Ticket(id: nextID, address: address)
        held.insert(ticket.id)
        byAddress[address, default: Counts()].all += 1
        byAddress[address, default: Counts()].unauthenticated += 1
        total.all += 1
        total.unauthenticated += 1
        return .admitted(ticket)
    }

    /// The connection was accepted: it leaves the stranger caps (the overall ones still count it).
    mutating func authenticated(_ ticket: Ticket) {
        guard held.contains(ticket.id), authenticated.insert(ticket.id).inserted else { return }
        byAddress[ticket.address, default: Counts()].unauthenticated -= 1
        total.unauthenticated -= 1
    }

    /// The connection is gone. Releasing twice (or a ticket never admitted) does nothing.
    mutating func release(_ ticket: Ticket) {
        guard held.remove(ticket.id) != nil else { return }
        let wasAuthenticated = authenticated.remove(ticket.id) != nil
        var counts = byAddress[ticket.address, default: Counts()]
        counts.all -= 1
        total.all -= 1
        if !wasAuthenticated {
            counts.unauthenticated -= 1
            total.unauthenticated -= 1
        }
        byAddress[ticket.address] = counts.all == 0 ? nil : counts
    }
}
