extension Array {
    /// The element at `index`, or nil outside the array: for indices that come
    /// from another table (a plan's rows, a peer's message) and may not match.
    package subscript(safe index: Int) -> Element? {
        indices.contains(index) ? self[index] : nil
    }
}
