import Foundation
import Testing

/// The public surface an app gets from the library products, checked in
/// (`API/public-api.txt`): a change to it shows up here, and is made on purpose
/// (`make api` writes the listing again). One line per public declaration, from the
/// symbol graphs of every module an app can reach through `import LocalFirstSync` and
/// `import LocalFirstSyncTesting` (the lower layers only by the types those alias).
@Suite struct PublicAPITests {
    static let modules = ["LocalFirstSync", "LocalFirstSyncTesting", "LFSyncSystem", "LFSyncCrypto", "LFSyncContent",
                          "LFSyncStore", "LFSyncLanding", "LFSyncTransport", "LFSyncTCP", "LFSyncDiscovery"]
    static let listingURL = TestSupport.packageRoot.appendingPathComponent("Tests/LocalFirstSyncTests/API/public-api.txt")

    /// The toolchain's symbol graph extractor, beside `swift` on the PATH.
    static let extractor: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        return path.split(separator: ":").map { "\($0)/swift-symbolgraph-extract" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    /// The built modules, beside the test binary (`.build/<triple>/<configuration>/Modules`).
    static let modulesDirectory: URL? = {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = binary.deletingLastPathComponent()
        for _ in 0..<4 {
            let modules = directory.appendingPathComponent("Modules")
            if FileManager.default.fileExists(atPath: modules.appendingPathComponent("LocalFirstSync.swiftmodule").path) { return modules }
            directory = directory.deletingLastPathComponent()
        }
        return nil
    }()

    @Test(.enabled(if: extractor != nil, "no swift-symbolgraph-extract on the PATH to list the public surface with"),
          .enabled(if: modulesDirectory != nil, "the built modules were not found beside the test binary"))
    func theCheckedInListingIsThePublicSurface() throws {
        let listing = try Self.listing()
        if ProcessInfo.processInfo.environment["LFSYNC_WRITE_API"] != nil {
            try listing.write(to: Self.listingURL, atomically: true, encoding: .utf8)
        }
        let checkedIn = (try? String(contentsOf: Self.listingURL, encoding: .utf8)) ?? ""
        let now = Set(listing.split(separator: "\n")), before = Set(checkedIn.split(separator: "\n"))
        #expect(now.subtracting(before).isEmpty, "public now, not in the listing (make api, and review): \(now.subtracting(before).sorted().prefix(20))")
        #expect(before.subtracting(now).isEmpty, "in the listing, no longer public (make api, and review): \(before.subtracting(now).sorted().prefix(20))")
    }

    static func listing() throws -> String {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("lfsync-api-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: output) }
        var lines: [String] = []
        let cModules = ["CLinux", "CSodium", "CCrypto", "CZstd", "CSQLite", "CDNSSD"]
        for module in modules {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: try #require(extractor))
            process.arguments = ["-module-name", module, "-I", try #require(modulesDirectory).path,
                                 "-target", "x86_64-unknown-linux-gnu", "-minimum-access-level", "public", "-output-dir", output.path]
                + cModules.flatMap { ["-I", TestSupport.packageRoot.appendingPathComponent("Sources/\($0)").path] }
            try process.run()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "swift-symbolgraph-extract \(module)")
        }
        for file in try FileManager.default.contentsOfDirectory(atPath: output.path).sorted() where file.hasSuffix(".symbols.json") {
            let graph = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: output.appendingPathComponent(file))) as? [String: Any])
            let module = file.replacingOccurrences(of: ".symbols.json", with: "").replacingOccurrences(of: "@", with: " extending ")
            for symbol in graph["symbols"] as? [[String: Any]] ?? [] {
                let kind = (symbol["kind"] as? [String: Any])?["displayName"] as? String ?? "?"
                let path = (symbol["pathComponents"] as? [String] ?? []).joined(separator: ".")
                let declaration = (symbol["declarationFragments"] as? [[String: Any]] ?? []).compactMap { $0["spelling"] as? String }.joined()
                    .split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
                lines.append("\(module) | \(kind) | \(path) | \(declaration)")
            }
        }
        return lines.sorted().joined(separator: "\n") + "\n"
    }
}
