import Foundation

/// The published Noise vectors (cacophony and snow formats, normalised to
/// JSON) shared by every lfsync implementation.
struct NoiseTestVectors: Decodable {
    struct Vector: Decodable {
        struct Message: Decodable {
            let payload: String
            let ciphertext: String
        }

        let protocolName: String
        let initPrologue: String
        let initEphemeral: String
        let initStatic: String?
        let initRemoteStatic: String?
        let initPsks: [String]?
        let respPrologue: String
        let respEphemeral: String?
        let respStatic: String?
        let respRemoteStatic: String?
        let respPsks: [String]?
        let handshakeHash: String?
        let messages: [Message]
        let source: String?
    }

    let vectors: [Vector]

    static let fileName = "noise-25519-chachapoly-blake2b.json"

    /// A copy kept in the repository (see `Vectors/README.md` for its origin).
    static let fileURL = TestSupport.vectorsDirectory.appendingPathComponent(fileName)

    /// Throws (failing the calling test) when the file is absent: a missing
    /// vectors file must never look like a pass.
    static func load() throws -> NoiseTestVectors {
        guard FileManager.default.fileExists(atPath: fileURL.path) else {
            throw LoadError("Noise test vectors missing: expected \(fileURL.standardizedFileURL.path)")
        }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode(NoiseTestVectors.self, from: Data(contentsOf: fileURL))
    }

    struct LoadError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}

enum NoiseHex {
    static func decode(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    static func encode(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0f)]] })
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
