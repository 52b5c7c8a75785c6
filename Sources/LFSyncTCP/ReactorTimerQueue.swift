/// The reactor's pending deadlines: a binary min-heap of `(deadline, registration id)`.
///
/// Entries are never removed early. A registration keeps at most one live entry (the reactor
/// records which), and when an entry comes due the handler is asked for its *current* next
/// deadline, which is pushed again if there is one. So a receive that completes before its
/// idle timeout costs nothing, and the heap holds about one entry per waiting connection even
/// at thousands of receives per second.
struct ReactorTimerQueue: Sendable {
    package struct Entry: Sendable {
        var deadline: MonotonicInstant
        var id: UInt64
    }

    private var heap: [Entry] = []

    package var isEmpty: Bool { heap.isEmpty }
    package var earliest: MonotonicInstant? { heap.first?.deadline }

    package mutating func insert(_ entry: Entry) {
        heap.append(entry)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].deadline < heap[parent].deadline else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the earliest entry if it is due at `now`.
    package mutating func popDue(at now: MonotonicInstant) -> Entry? {
        guard let first = heap.first, first.deadline <= now else { return nil }
        let last = heap.removeLast()
        guard !heap.isEmpty else { return first }
        heap[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count, heap[left].deadline < heap[smallest].deadline { smallest = left }
            if right < heap.count, heap[right].deadline < heap[smallest].deadline { smallest = right }
            guard smallest != parent else { break }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
        return first
    }
}
