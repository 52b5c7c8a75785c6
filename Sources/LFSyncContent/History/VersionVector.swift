/// A version vector: per device that ever changed a path, how many changes of it that device
/// made — what tells, for two versions of one path, whether one descends from the other (a
/// fast-forward) or neither does (they were made concurrently: a conflict). Syncthing's BEP
/// keeps one per file; lfsync keeps one per library path (PROTOCOL.md, "Path versions").
///
/// Devices are named by a 64-bit short ID (`DeviceShortID`: the first 8 bytes of the Device
/// ID hash). Entries are kept sorted by device, without zero counters, so equal vectors are
/// equal values and encode to equal bytes.
package struct VersionVector: Hashable, Sendable, CustomStringConvertible {
    package private(set) var entries: [(device: UInt64, counter: UInt64)]

    /// Most devices a vector may name (a household's devices over the years; the wire bound).
    package static let maxEntries = 256

    package init() { entries = [] }

    /// From entries in any order; zero counters dropped, a device named twice keeps its larger.
    package init(_ pairs: [(device: UInt64, counter: UInt64)]) {
        var merged: [UInt64: UInt64] = [:]
        for (device, counter) in pairs where counter > 0 { merged[device] = max(merged[device] ?? 0, counter) }
        entries = merged.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    package static func == (lhs: VersionVector, rhs: VersionVector) -> Bool {
        lhs.entries.count == rhs.entries.count && zip(lhs.entries, rhs.entries).allSatisfy { $0.device == $1.device && $0.counter == $1.counter }
    }

    package func hash(into hasher: inout Hasher) {
        for entry in entries {
            hasher.combine(entry.device)
            hasher.combine(entry.counter)
        }
    }

    package func counter(of device: UInt64) -> UInt64 {
        entries.first { $0.device == device }?.counter ?? 0
    }

    /// This vector with `device`'s counter one higher: a change made by that device.
    package func incremented(by device: UInt64) -> VersionVector {
        var pairs = entries
        if let index = pairs.firstIndex(where: { $0.device == device }) {
            pairs[index].counter &+= 1
        } else {
            pairs.append((device, 1))
        }
        return VersionVector(pairs)
    }

    /// The least vector that descends from both (each device's larger counter): what a path
    /// carries once both versions were seen.
    package func merged(with other: VersionVector) -> VersionVector {
        VersionVector(entries + other.entries)
    }

    package enum Order: Equatable, Sendable {
        case equal
        /// This one descends from the other (it saw every change the other did, and more).
        case newer
        /// The other descends from this one.
        case older
        /// Neither: each has a change the other did not see.
        case concurrent
    }

    package func compared(to other: VersionVector) -> Order {
        var greater = false, smaller = false
        var left = entries[...], right = other.entries[...]
        while !left.isEmpty || !right.isEmpty {
            let a = left.first, b = right.first
            if let a, let b, a.device == b.device {
                if a.counter > b.counter { greater = true } else if a.counter < b.counter { smaller = true }
                left = left.dropFirst()
                right = right.dropFirst()
            } else if let a, b.map({ a.device < $0.device }) ?? true {
                greater = true  // a device only this vector has
                left = left.dropFirst()
            } else {
                smaller = true
                right = right.dropFirst()
            }
        }
        switch (greater, smaller) {
        case (false, false): return .equal
        case (true, false): return .newer
        case (false, true): return .older
        case (true, true): return .concurrent
        }
    }

    /// 16 bytes per entry — device, then counter, each a big-endian u64 — in device order:
    /// the same bytes in the ledger and on the wire (PROTOCOL.md, "Path versions").
    package func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(entries.count * 16)
        for entry in entries {
            for value in [entry.device, entry.counter] {
                for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
            }
        }
        return bytes
    }

    /// Reads `encoded()`'s form strictly: whole entries, at most `maxEntries`, devices in
    /// ascending order without repeats, no zero counter — so each vector has one encoding.
    /// Nil for anything else (a damaged ledger row, a peer's bad bytes).
    package init?(encoded bytes: some Collection<UInt8>) {
        guard bytes.count % 16 == 0, bytes.count / 16 <= Self.maxEntries else { return nil }
        var pairs: [(device: UInt64, counter: UInt64)] = []
        pairs.reserveCapacity(bytes.count / 16)
        var iterator = bytes.makeIterator()
        func next() -> UInt64 {
            var value: UInt64 = 0
            for _ in 0..<8 { value = value << 8 | UInt64(iterator.next() ?? 0) }
            return value
        }
        for _ in 0..<(bytes.count / 16) {
            let device = next(), counter = next()
            guard counter > 0, pairs.last.map({ $0.device < device }) ?? true else { return nil }
            pairs.append((device, counter))
        }
        entries = pairs
    }

    package var description: String {
        "{" + entries.map { "\(String($0.device, radix: 16).suffix(4)):\($0.counter)" }.joined(separator: ",") + "}"
    }
}
