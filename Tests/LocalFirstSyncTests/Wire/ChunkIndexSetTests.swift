import Testing
@testable import LFSyncWire

/// A receiver's NeededChunks may name up to 2^22 indices per file whatever the
/// file holds; the sender visits only those the file has.
@Suite struct ChunkIndexSetTests {
    @Test func indicesBelowALimitVisitOnlyThose() {
        let everything = ChunkIndexSet(ranges: [0..<(1 << 22)])
        #expect(Array(everything.indices(below: 3)) == [0, 1, 2])
        #expect(Array(everything.indices(below: 0)).isEmpty)
        let scattered = ChunkIndexSet(ranges: [1..<3, 5..<6, 9..<4_000_000])
        #expect(Array(scattered.indices(below: 10)) == [1, 2, 5, 9])
        #expect(Array(scattered.indices(below: 5)) == [1, 2])
        #expect(Array(scattered.indices(below: 6)) == [1, 2, 5])
        #expect(Array(scattered.indices(below: 1)).isEmpty)
        #expect(Array(ChunkIndexSet(ranges: [0..<UInt32.max]).indices(below: 2)) == [0, 1])
    }
}
