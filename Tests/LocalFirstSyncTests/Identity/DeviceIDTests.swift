import Foundation
import Testing
@testable import LocalFirstSync
@testable import LFSyncCrypto
@testable import LFSyncSystem

@Suite struct DeviceIDTests {
    static let sampleKey: [UInt8] = Array(0...31)

    static func randomIDs(_ count: Int) -> [DeviceID] {
        var generator = SplitMix64(seed: 31)
        return (0..<count).map { _ in DeviceID(publicKey: generator.bytes(32)) }
    }

    @Test func textFormShape() {
        let id = DeviceID(publicKey: Self.sampleKey)
        let text = id.description
        let blocks = text.split(separator: "-")
        #expect(blocks.count == 8 && blocks.allSatisfy { $0.count == 7 })
        #expect(text.allSatisfy { $0 == "-" || ("A"..."Z").contains($0) || ("2"..."7").contains($0) })
        #expect(id.compactForm.count == 56)
        #expect(id.shortForm == String(blocks[0]))
        #expect(id.hash == Blake2b.hash(Self.sampleKey))
        #expect(id.matches(publicKey: Self.sampleKey))
        #expect(!id.matches(publicKey: Array(1...32)))
    }

    @Test func roundTrips() throws {
        for id in Self.randomIDs(200) {
            #expect(try DeviceID(parsing: id.description) == id)
            #expect(try DeviceID(parsing: id.compactForm) == id)
            #expect(DeviceID(id.description) == id)
        }
    }

    @Test func separatorsAndCaseAreTolerated() throws {
        let id = DeviceID(publicKey: Self.sampleKey)
        let compact = id.compactForm
        #expect(try DeviceID(parsing: compact.lowercased()) == id)
        #expect(try DeviceID(parsing: id.description.lowercased()) == id)
        let spaced = id.description.replacingOccurrences(of: "-", with: " ")
        #expect(try DeviceID(parsing: "  " + spaced + "\n") == id)
        let messy = compact.enumerated().map { $0.offset % 5 == 0 ? "-\($0.element)" : String($0.element) }.joined() + "--"
        #expect(try DeviceID(parsing: messy) == id)
    }

    @Test func everySingleSubstitutionIsRejected() {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        for id in Self.randomIDs(4) + [DeviceID(publicKey: Self.sampleKey)] {
            let characters = Array(id.compactForm)
            for position in characters.indices {
                // Every other alphabet character at every position: 56 × 31 typos.
                for replacement in alphabet where replacement != characters[position] {
                    var typo = characters
                    typo[position] = replacement
                    let group = position / 14 + 1
                    #expect(throws: DeviceIDError.checkCharacterMismatch(group: group)) {
                        try DeviceID(parsing: String(typo))
                    }
                }
            }
        }
    }

    @Test func mismatchMessageNamesTheGroup() {
        var characters = Array(DeviceID(publicKey: Self.sampleKey).compactForm)
        characters[20] = characters[20] == "A" ? "B" : "A"
        do {
            _ = try DeviceID(parsing: String(characters))
            Issue.record("accepted a typo")
        } catch {
            #expect(error.description == "check character mismatch in group 2 (blocks 3–4): probably a typo")
        }
    }

    @Test func wrongLengthIsRejected() {
        let compact = DeviceID(publicKey: Self.sampleKey).compactForm
        #expect(throws: DeviceIDError.wrongLength(55)) { try DeviceID(parsing: String(compact.dropLast())) }
        #expect(throws: DeviceIDError.wrongLength(57)) { try DeviceID(parsing: compact + "A") }
        #expect(throws: DeviceIDError.wrongLength(0)) { try DeviceID(parsing: "") }
        #expect(throws: DeviceIDError.wrongLength(10_000)) { try DeviceID(parsing: String(repeating: "A", count: 10_000)) }
        #expect(DeviceIDError.wrongLength(55).description.contains("56 characters"))
    }

    @Test func invalidCharactersAreRejectedWithAHint() {
        var characters = Array(DeviceID(publicKey: Self.sampleKey).description)
        characters[3] = "0"
        let error = #expect(throws: DeviceIDError.self) { try DeviceID(parsing: String(characters)) }
        #expect(error == .invalidCharacter("0", position: 4))
        #expect(error?.description.contains("did you mean the letter O?") == true)
        #expect(throws: DeviceIDError.invalidCharacter("é", position: 1)) { try DeviceID(parsing: "é") }
    }

    @Test func nonCanonicalPaddingIsRejected() throws {
        // Change the last data character so only its padding bits differ, and
        // recompute the group's check character so that the Luhn check passes.
        var values = DeviceID(publicKey: Self.sampleKey).compactForm.utf8.map { Base32.value(of: $0) ?? 0 }
        values[54] |= 1
        values[55] = Base32.value(of: LuhnBase32.checkCharacter(for: values[42..<55])) ?? 0
        let text = String(decoding: values.map { Base32.alphabet[Int($0)] }, as: UTF8.self)
        #expect(throws: DeviceIDError.nonCanonical) { try DeviceID(parsing: text) }
    }

    @Test func codableUsesTheTextForm() throws {
        let id = DeviceID(publicKey: Self.sampleKey)
        let data = try JSONEncoder().encode([id])
        #expect(String(decoding: data, as: UTF8.self) == "[\"\(id.description)\"]")
        #expect(try JSONDecoder().decode(Array<DeviceID>.self, from: data) == [id])
    }

    @Test func luhnMatchesAHandComputedValue() {
        // "AB": B=1 (rightmost, doubled) → 2, A=0 → 0; sum 2; check = (32 − 2) mod 32 = 30 → "6".
        #expect(LuhnBase32.checkCharacter(for: [0, 1]) == UInt8(ascii: "6"))
        // "7" = 31 doubled = 62 → 1 + 30 = 31; check = 1 → "B".
        #expect(LuhnBase32.checkCharacter(for: [31]) == UInt8(ascii: "B"))
    }
}
