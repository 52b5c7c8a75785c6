extension Array {
    /// The element at `index`, or nil outside the array: for indices that come
    /// from another table (a plan's rows, a peer's message) and may not match.
    /// Inlinable: called per placement file from other modules, an unspecialised
    /// generic subscript cost 6 % of a receiver's CPU on a repeat push.
    @inlinable
    package subscript(safe index: Int) -> Element? {
        indices.contains(index) ? self[index] : nil
    }
}
