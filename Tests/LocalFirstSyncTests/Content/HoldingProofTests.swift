import Foundation
import Testing
@testable import LFSyncContent
@testable import LFSyncCrypto

/// The proof a holder gives of a copy (PROTOCOL.md, "Holding checks"): made only from the
/// asset's bytes as they are now, different for every nonce and every holder, and never
/// made from a copy whose bytes no longer match their hashes.
@Suite struct HoldingProofTests {
    static let nonce = Hash256(bytes: [UInt8](repeating: 7, count: 32))!
    static let holder = DeviceID(publicKey: Array(0...31))

    /// A RAW+JPEG pair with a sidecar, written under `library`; its asset as scanned.
    static func pair(in library: URL, raw: [UInt8] = Array(repeating: 0x52, count: 300_000)) throws -> Asset {
        let files: [(String, FileRole, [UInt8])] = [
            ("DSC_0100.JPG", .primary, Array(repeating: 0x4A, count: 200_000)), ("DSC_0100.NEF", .raw, raw),
            ("DSC_0100.NEF.xmp", .sidecar, Array("<x:xmpmeta/>".utf8)),
        ]
        for (name, _, bytes) in files { try TestSupport.write(bytes, to: library.appendingPathComponent(name)) }
        return Asset(files: files.map { name, role, bytes in .init(role: role, manifest: FileManifest(path: RelativePath(name), contents: bytes)) })
    }

    static func proof(_ asset: Asset, _ library: URL, nonce: Hash256 = nonce, holder: DeviceID = holder) -> Hash256? {
        if case let .proof(proof) = HoldingProof.compute(for: asset, in: library, nonce: nonce, holder: holder) { return proof }
        return nil
    }

    @Test func twoHoldersOfTheSameBytesAgreeAndEveryNonceOrHolderChangesTheProof() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let mine = root.appendingPathComponent("mine"), theirs = root.appendingPathComponent("theirs")
            let asset = try Self.pair(in: mine)
            _ = try Self.pair(in: theirs)
            let proof = try #require(Self.proof(asset, mine))
            #expect(Self.proof(asset, theirs) == proof)
            #expect(Self.proof(asset, theirs, nonce: Hash256(bytes: [UInt8](repeating: 8, count: 32))!) != proof)
            #expect(Self.proof(asset, theirs, holder: DeviceID(publicKey: Array(1...32))) != proof)
        }
    }

    @Test func aCopyDamagedOnDiskGivesNoProof() async throws {
        try await TestSupport.withTemporaryDirectory { library in
            let asset = try Self.pair(in: library)
            let raw = library.appendingPathComponent("DSC_0100.NEF")
            var bytes = try Data(contentsOf: raw)
            bytes[150_000] ^= 0x80
            try bytes.write(to: raw)
            #expect(HoldingProof.compute(for: asset, in: library, nonce: Self.nonce, holder: Self.holder) == .damaged("DSC_0100.NEF"))
        }
    }

    @Test func aGrownOrMissingFileGivesNoProof() async throws {
        try await TestSupport.withTemporaryDirectory { library in
            let asset = try Self.pair(in: library)
            let handle = try FileHandle(forWritingTo: library.appendingPathComponent("DSC_0100.NEF.xmp"))
            try handle.seekToEnd()
            try handle.write(contentsOf: Data("more".utf8))
            try handle.close()
            #expect(HoldingProof.compute(for: asset, in: library, nonce: Self.nonce, holder: Self.holder) == .damaged("DSC_0100.NEF.xmp"))
            try FileManager.default.removeItem(at: library.appendingPathComponent("DSC_0100.JPG"))
            guard case .unreadable(let path, _) = HoldingProof.compute(for: asset, in: library, nonce: Self.nonce, holder: Self.holder) else {
                Issue.record("a missing file gave a proof")
                return
            }
            #expect(path == "DSC_0100.JPG")
        }
    }
}
