/// A size as people read it: decimal units, as Finder and most photo tools show sizes
/// (`5.2 MB`), so that no message asks anyone to count the digits of 5156120.
package enum ByteCountText {
    package static func format(_ bytes: UInt64) -> String {
        let units = ["B", "kB", "MB", "GB", "TB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1000, unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        guard unit > 0 else { return "\(bytes) B" }
        // One decimal, rounded half up: 5156120 bytes → "5.2 MB".
        let tenths = UInt64((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10) \(units[unit])"
    }
}
