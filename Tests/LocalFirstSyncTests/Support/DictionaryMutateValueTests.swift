import Testing
@testable import LFSyncSystem

/// `mutateValue(forKey:)` changes the stored value itself (nested values
/// included) and leaves the dictionary alone when the key is absent.
@Suite("Dictionary.mutateValue")
struct DictionaryMutateValueTests {
    @Test func changesTheValueInPlaceAndReturnsWhatTheBodyReturns() {
        var table: [String: [Int: Set<Int>]] = ["a": [1: [1, 2, 3]]]
        let left = table.mutateValue(forKey: "a") { files in
            files.mutateValue(forKey: 1) { chunks -> Int in
                chunks.remove(2)
                return chunks.count
            }
        }
        #expect(left == .some(.some(2)))
        #expect(table == ["a": [1: [1, 3]]])
    }

    @Test func anAbsentKeyRunsNothing() {
        var table: [String: Int] = ["a": 1]
        var ran = false
        let result: Void? = table.mutateValue(forKey: "b") { _ in ran = true }
        #expect(result == nil && !ran)
        #expect(table == ["a": 1])
    }
}
