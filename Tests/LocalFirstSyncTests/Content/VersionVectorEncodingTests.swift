import Foundation
import Testing
@testable import LFSyncContent

/// A vector's 16 bytes per entry read the same way from raw memory (the ledger's column, the
/// fast path) as from a collection (the wire), and both refuse the same malformed inputs.
@Suite struct VersionVectorEncodingTests {
    static func decodeRaw(_ bytes: [UInt8]) -> VersionVector? {
        bytes.withUnsafeBytes { VersionVector(encoded: $0) }
    }

    @Test func rawMemoryAndCollectionsDecodeAlike() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let count = Int.random(in: 0...6, using: &generator)
            let vector = VersionVector((0..<count).map { _ in
                (device: UInt64.random(in: 1...UInt64.max, using: &generator), counter: UInt64.random(in: 1...1_000, using: &generator))
            })
            let bytes = vector.encoded()
            #expect(Self.decodeRaw(bytes) == vector)
            #expect(VersionVector(encoded: bytes) == vector)
        }
    }

    @Test func malformedVectorsAreRefusedByBoth() {
        let one = VersionVector([(device: 7, counter: 1)]).encoded()
        let cases: [[UInt8]] = [
            Array(one.dropLast()),                                  // not whole entries
            one + one,                                              // a device twice
            VersionVector([(device: 9, counter: 1)]).encoded() + one, // devices out of order
            Array(repeating: 0, count: 8) + Array(repeating: 0, count: 8), // a zero counter
            Array(repeating: 1, count: 16 * (VersionVector.maxEntries + 1)), // too many entries
        ]
        for bytes in cases {
            #expect(Self.decodeRaw(bytes) == nil, "\(bytes.count) bytes")
            #expect(VersionVector(encoded: bytes) == nil, "\(bytes.count) bytes")
        }
    }
}
