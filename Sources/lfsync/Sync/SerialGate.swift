/// Runs its callers one at a time, in arrival order: the syncs a serving device applies
/// to one library (two peers' syncs at once would each plan on a disk the other is changing).
actor SerialGate {
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func run<Value: Sendable>(_ body: @Sendable () async -> Value) async -> Value {
        if busy {
            await withCheckedContinuation { waiting.append($0) }
        }
        busy = true
        let value = await body()
        if waiting.isEmpty {
            busy = false
        } else {
            // Handed straight to the next caller: `busy` stays set for it.
            waiting.removeFirst().resume()
        }
        return value
    }
}
