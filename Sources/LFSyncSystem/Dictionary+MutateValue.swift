extension Dictionary {
    /// Runs `body` on the value for `key` in place, if there is one; nil when there is not.
    ///
    /// Why not `dict[key]?.field += 1`: that goes through `subscript(key:)`'s
    /// `_modify` coroutine, whose frame does not fit the caller's inline buffer
    /// and is allocated on the heap — about three `malloc`s per dictionary level
    /// of the chain, each time. The receiver's bookkeeping does such a chain
    /// several times for every chunk and file it receives; through the value's
    /// index it allocates nothing.
    @inlinable
    package mutating func mutateValue<Result>(forKey key: Key, _ body: (inout Value) throws -> Result) rethrows -> Result? {
        guard let index = index(forKey: key) else { return nil }
        return try body(&values[index])
    }
}
