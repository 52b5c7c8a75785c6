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
        .executable(name: "lfsync", targets: ["lfsync"]),
    ],
    targets: [
        systemModule("CSodium", pkgConfig: "libsodium", apt: "libsodium-dev"),
        systemModule("CZstd", pkgConfig: "libzstd", apt: "libzstd-dev"),
        systemModule("CSQLite", pkgConfig: "sqlite3", apt: "libsqlite3-dev"),
        /// glibc interfaces missing from Swift's Glibc module; header-only.
        .systemLibrary(name: "CLinux"),
        systemModule("CDNSSD", pkgConfig: "avahi-compat-libdns_sd", apt: "libavahi-compat-libdnssd-dev"),
        .target(
            name: "LocalFirstSync",
            dependencies: ["CSodium", "CZstd", "CSQLite", "CDNSSD", "CLinux"]
        ),
        .executableTarget(name: "lfsync", dependencies: ["LocalFirstSync"]),
        /// Advertises or browses over DNS-SD; the discovery lab runs it inside network namespaces.
        .executableTarget(name: "lfsync-discovery-probe", dependencies: ["LocalFirstSync"]),
        .executableTarget(name: "lfsync-hostile-peer", dependencies: ["LocalFirstSync"]),
        /// Synthetic media and sample libraries, shared by tests, the demo and the benchmarks.
        .target(name: "LFSyncFixtures", dependencies: ["LocalFirstSync"]),
        .executableTarget(name: "lfsync-bench", dependencies: ["LocalFirstSync", "LFSyncFixtures"]),
        .testTarget(
            name: "LocalFirstSyncTests", dependencies: ["LocalFirstSync", "LFSyncFixtures", "CSodium", "CLinux"],
            // Read at run time from the source tree, so that other implementations can use them too.
            exclude: ["Vectors"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
