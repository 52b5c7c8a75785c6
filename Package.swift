// swift-tools-version:6.0
import PackageDescription

/// The C libraries come from Debian's -dev packages; SwiftPM finds them through
/// pkg-config and names the apt package to install when one is missing.
func systemModule(_ name: String, pkgConfig: String, apt: String) -> Target {
    .systemLibrary(name: name, pkgConfig: pkgConfig, providers: [.apt([apt])])
}

let package = Package(
    name: "lfsync",
    products: [
        .library(name: "LocalFirstSync", targets: ["LocalFirstSync"]),
        .library(name: "LocalFirstSyncTesting", targets: ["LocalFirstSyncTesting"]),
        .executable(name: "lfsync", targets: ["lfsync"]),
    ],
    targets: [
        systemModule("CSodium", pkgConfig: "libsodium", apt: "libsodium-dev"),
        /// OpenSSL's libcrypto: the transport ciphers and keyed BLAKE2b (ARCHITECTURE.md, "Which library does what").
        systemModule("CCrypto", pkgConfig: "libcrypto", apt: "libssl-dev"),
        systemModule("CZstd", pkgConfig: "libzstd", apt: "libzstd-dev"),
        systemModule("CSQLite", pkgConfig: "sqlite3", apt: "libsqlite3-dev"),
        /// glibc interfaces missing from Swift's Glibc module; header-only.
        .systemLibrary(name: "CLinux"),
        systemModule("CDNSSD", pkgConfig: "avahi-compat-libdns_sd", apt: "libavahi-compat-libdnssd-dev"),
        // The layers, bottom up (ARCHITECTURE.md, "Layers"). Each is its own
        // target so the compiler refuses an import against the direction;
        // `package` access carries what they share without making it public.
        // A target names every layer it imports, not only the nearest: an
        // incremental build then rebuilds it when any of them changes.
        .target(name: "LFSyncSystem", dependencies: ["CLinux"]),
        .target(name: "LFSyncCrypto", dependencies: ["LFSyncSystem", "CSodium", "CCrypto"]),
        .target(name: "LFSyncContent", dependencies: ["LFSyncSystem", "LFSyncCrypto"]),
        .target(name: "LFSyncStore", dependencies: ["LFSyncSystem", "LFSyncCrypto", "LFSyncContent", "CSQLite", "CLinux"]),
        /// How received bytes become files in a library, safely: staging, partials, verifying,
        /// installing without replacing, reflinks, conflict names (file-system ingestion).
        .target(name: "LFSyncLanding", dependencies: ["LFSyncSystem", "LFSyncCrypto", "LFSyncContent", "LFSyncStore", "CLinux"]),
        .target(name: "LFSyncTransport", dependencies: ["LFSyncSystem"]),
        /// Real sockets on epoll, kept apart from the seam like NIOPosix is from NIOCore.
        .target(name: "LFSyncTCP", dependencies: ["LFSyncSystem", "LFSyncTransport", "CLinux"]),
        .target(name: "LFSyncWire", dependencies: ["LFSyncSystem", "LFSyncTransport", "LFSyncContent", "LFSyncCrypto", "CZstd", "CSodium"]),
        .target(name: "LFSyncDiscovery", dependencies: ["LFSyncSystem", "CDNSSD", "CLinux"]),
        /// The engine and the public API an app imports.
        .target(
            name: "LocalFirstSync",
            dependencies: [
                "LFSyncSystem", "LFSyncCrypto", "LFSyncContent", "LFSyncStore", "LFSyncLanding", "LFSyncTransport", "LFSyncWire",
                "LFSyncTCP", "LFSyncDiscovery",
            ]
        ),
        /// In-memory transport and discovery with fault injection, and a manual
        /// clock: what an app's own tests need (like NIOEmbedded).
        .target(name: "LocalFirstSyncTesting", dependencies: ["LocalFirstSync", "LFSyncSystem", "LFSyncCrypto", "LFSyncContent", "LFSyncStore", "LFSyncLanding", "LFSyncTransport", "LFSyncTCP", "LFSyncDiscovery"]),
        .executableTarget(name: "lfsync", dependencies: ["LocalFirstSync", "LFSyncSystem", "LFSyncCrypto", "LFSyncContent", "LFSyncStore", "LFSyncLanding", "LFSyncTransport", "LFSyncTCP", "LFSyncDiscovery", "LFSyncWire"]),
        /// Advertises or browses over DNS-SD; the discovery lab runs it inside network namespaces.
        .executableTarget(name: "lfsync-discovery-probe", dependencies: ["LocalFirstSync", "LFSyncSystem", "LFSyncCrypto", "LFSyncContent", "LFSyncStore", "LFSyncLanding", "LFSyncTransport", "LFSyncTCP", "LFSyncDiscovery"]),
        .executableTarget(name: "lfsync-hostile-peer", dependencies: ["LocalFirstSync", "LFSyncSystem", "LFSyncCrypto", "LFSyncContent", "LFSyncStore", "LFSyncLanding", "LFSyncTransport", "LFSyncTCP", "LFSyncDiscovery", "LFSyncWire"]),
        /// Synthetic media and sample libraries, shared by tests, the demo and the benchmarks.
        .target(name: "LFSyncFixtures", dependencies: ["LocalFirstSync", "LFSyncSystem", "LFSyncCrypto", "LFSyncContent", "LFSyncStore", "LFSyncLanding", "LFSyncTransport", "LFSyncTCP", "LFSyncDiscovery"]),
        .executableTarget(name: "lfsync-bench", dependencies: ["LocalFirstSync", "LFSyncFixtures", "LFSyncSystem", "LFSyncCrypto", "LFSyncContent", "LFSyncStore", "LFSyncLanding", "LFSyncTransport", "LFSyncTCP", "LFSyncDiscovery", "LFSyncWire"]),
        /// Every parser of untrusted bytes as a fuzz target; `make fuzz` runs them under libFuzzer,
        /// the tests replay their corpus (Fuzz/corpus).
        .target(name: "LFSyncFuzzing", dependencies: [
            "LFSyncSystem", "LFSyncCrypto", "LFSyncContent", "LFSyncTransport", "LFSyncWire", "LFSyncDiscovery",
        ]),
        /// libFuzzer's `LLVMFuzzerRunDriver`, declared for Swift; header-only.
        .target(name: "CFuzzerDriver"),
        .executableTarget(name: "lfsync-fuzz", dependencies: ["LFSyncFuzzing", "CFuzzerDriver"]),
        .testTarget(
            name: "LocalFirstSyncTests",
            dependencies: [
                "LocalFirstSync", "LocalFirstSyncTesting", "LFSyncFixtures", "LFSyncSystem", "LFSyncCrypto", "LFSyncContent",
                "LFSyncStore", "LFSyncLanding", "LFSyncTransport", "LFSyncTCP", "LFSyncWire", "LFSyncDiscovery", "CSodium", "CLinux", "LFSyncFuzzing",
            ],
            // Read at run time from the source tree, so that other implementations can use them too.
            exclude: ["Vectors", "Fixtures"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
