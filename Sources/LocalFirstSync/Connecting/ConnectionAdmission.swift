/// The bookkeeping behind `ConnectionLimits`: which connections are held, by
/// source and phase. A value type with no clock and no I/O, so every limit is
/// tested without sockets; `LocalSync` owns one and asks it before it spends
/// anything on a new connection.
struct ConnectionAdmission: Sendable {
    /// A held slot; given back exactly once, with `release(_:)`.
    struct Ticket: Hashable, Sendable {
        let id: UInt64
        let address: String
        /// The network strangers are counted by (see `SourceNetwork`).
        let network: String
    }

    enum Verdict: Equatable, Sendable {
        /// In; the handshakes in `evicting` make room for it and are to be closed now.
        case admitted(Ticket, evicting: [Ticket])
        /// Over a cap: the connection is closed at once, and the reason logged.
        case refused(reason: String)
    }

    private enum Phase { case handshaking, awaitingConsent, authenticated }

    let limits: ConnectionLimits
    private var phases: [UInt64: (ticket: Ticket, phase: Phase)] = [:]
    /// Connections of every phase, by exact address.
    private var byAddress: [String: Int] = [:]
    /// Handshakes under way, oldest first, by network.
    private var handshakes: [String: [Ticket]] = [:]
    private var handshakeCount = 0
    private var awaiting: [String: Int] = [:]
    private var awaitingCount = 0
    private var nextID: UInt64 = 0

    init(limits: ConnectionLimits) {
        self.limits = limits
    }

    var heldCount: Int { phases.count }
    var unauthenticatedCount: Int { handshakeCount + awaitingCount }
    var handshakingCount: Int { handshakeCount }
    var awaitingConsentCount: Int { awaitingCount }

    /// A new connection from `address`, shaking hands until `helloArrived`.
    mutating func admit(from address: String) -> Verdict {
        let network = SourceNetwork.of(address)
        if byAddress[address, default: 0] >= limits.perAddress {
            return .refused(reason: "\(limits.perAddress) connections already open from \(address)")
        }
        var evicting: [Ticket] = []
        if handshakes[network, default: []].count >= limits.unauthenticatedPerAddress {
            guard let oldest = oldestHandshake(of: network) else {
                return .refused(reason: "\(limits.unauthenticatedPerAddress) handshakes already under way from \(network)")
            }
            evicting.append(oldest)
        } else if handshakeCount >= limits.unauthenticated || phases.count >= limits.total {
            // The busiest network gives up its oldest handshake: strangers who hold handshakes
            // open cannot keep anyone else out.
            guard let oldest = busiestNetwork().flatMap(oldestHandshake(of:)) else {
                return .refused(reason: "\(limits.total) connections already open")
            }
            evicting.append(oldest)
        }
        for ticket in evicting { release(ticket) }
        nextID += 1
        let ticket = Ticket(id: nextID, address: address, network: network)
        phases[ticket.id] = (ticket, .handshaking)
        byAddress[address, default: 0] += 1
        handshakes[network, default: []].append(ticket)
        handshakeCount += 1
        return .admitted(ticket, evicting: evicting)
    }

    /// The handshake is done and the Hello proved the device: a trusted one is
    /// authenticated at once; another waits for consent, if there is room for
    /// it in the consent queue (false: decline it now).
    mutating func helloArrived(_ ticket: Ticket, trusted: Bool) -> Bool {
        guard let entry = phases[ticket.id] else { return false }
        guard entry.phase == .handshaking else { return true }
        removeHandshake(ticket)
        if trusted {
            phases[ticket.id] = (ticket, .authenticated)
            return true
        }
        guard awaitingCount < limits.awaitingConsent, awaiting[ticket.network, default: 0] < limits.awaitingConsentPerAddress else {
            // Still held (as authenticated, outside the stranger caps) until it is released after
            // its decline is sent: a handshake slot is free again at once.
            phases[ticket.id] = (ticket, .authenticated)
            return false
        }
        phases[ticket.id] = (ticket, .awaitingConsent)
        awaiting[ticket.network, default: 0] += 1
        awaitingCount += 1
        return true
    }

    /// The connection was accepted: it leaves the stranger caps (the overall ones still count it).
    mutating func authenticated(_ ticket: Ticket) {
        guard let entry = phases[ticket.id] else { return }
        switch entry.phase {
        case .handshaking: removeHandshake(ticket)
        case .awaitingConsent: removeAwaiting(ticket)
        case .authenticated: return
        }
        phases[ticket.id] = (ticket, .authenticated)
    }

    /// The connection is gone. Releasing twice (or a ticket never admitted) does nothing.
    mutating func release(_ ticket: Ticket) {
        guard let entry = phases.removeValue(forKey: ticket.id) else { return }
        switch entry.phase {
        case .handshaking: removeHandshake(ticket)
        case .awaitingConsent: removeAwaiting(ticket)
        case .authenticated: break
        }
        let left = byAddress[ticket.address, default: 1] - 1
        byAddress[ticket.address] = left == 0 ? nil : left
    }

    private func oldestHandshake(of network: String) -> Ticket? {
        handshakes[network]?.first
    }

    private func busiestNetwork() -> String? {
        handshakes.max { $0.value.count < $1.value.count || ($0.value.count == $1.value.count && $0.key > $1.key) }?.key
    }

    private mutating func removeHandshake(_ ticket: Ticket) {
        guard var queue = handshakes[ticket.network], let index = queue.firstIndex(of: ticket) else { return }
        queue.remove(at: index)
        handshakes[ticket.network] = queue.isEmpty ? nil : queue
        handshakeCount -= 1
    }

    private mutating func removeAwaiting(_ ticket: Ticket) {
        let left = awaiting[ticket.network, default: 1] - 1
        awaiting[ticket.network] = left == 0 ? nil : left
        awaitingCount -= 1
    }
}
